// Command etcdload is the etcd load generator for the POPUC peer benchmark.
//
// Why Go: a grpc-js client saturates a core at ~2k etcd PUT/s on the bench machine, so
// a Node client would measure itself, not etcd. This uses etcd's own Go client (clientv3,
// built offline from Debian's golang-etcd-server-dev sources, see ../build.sh), the same
// client etcd's upstream `benchmark` tool uses.
//
// It runs -clients concurrent workers over -conns clientv3 connections (each connection
// balances round-robin over all -endpoints), each issuing one request at a time, for
// -duration or until -total requests have been issued, and prints ONE JSON line to stdout:
// ops, errors, seconds, throughput, p50/p99/max latency (ms), the per-100ms timeline of
// successful completions (so the caller can measure a write stall while a leader is
// killed), the longest gap between two successful completions, and the process' own CPU
// seconds from getrusage (to show the client is not the bottleneck).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/clientv3"
)

const bucket = 100 * time.Millisecond

type result struct {
	Op         string  `json:"op"`
	Endpoints  int     `json:"endpoints"`
	Conns      int     `json:"conns"`
	Clients    int     `json:"clients"`
	ValueSize  int     `json:"valueSize"`
	KeySpace   int     `json:"keySpace"`
	Ops        int64   `json:"ops"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	Throughput float64 `json:"throughput"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	MaxMs      float64 `json:"maxMs"`
	MaxGapMs   float64 `json:"maxGapMs"`
	// With -gap-from: the longest interval between successive completions among those that end after it
	// (the interval a kill at that offset falls in counts whole), and the longest before it.
	MaxGapFromMs   float64 `json:"maxGapFromMs"`
	MaxGapBeforeMs float64 `json:"maxGapBeforeMs"`
	// CPU seconds (user+sys) this process spent during the timed load phase only.
	CPUSeconds float64 `json:"cpuSeconds"`
	CPUUser    float64 `json:"cpuUserSeconds"`
	CPUSys     float64 `json:"cpuSysSeconds"`
	// CPU seconds of the whole process (connect, prefill, load, report).
	CPUTotalSeconds float64  `json:"cpuTotalSeconds"`
	Timeline        []int64  `json:"timeline100ms"`
	ErrorTimeline   []int64  `json:"errorTimeline100ms"`
	ErrorSamples    []string `json:"errorSamples"`
}

type worker struct {
	latencies []time.Duration // successful requests only
	doneAt    []time.Duration // completion offsets of successful requests
	timeline  []int64
	errTime   []int64
	errors    int64
	errSample []string
}

func (w *worker) mark(tl *[]int64, at time.Duration) {
	i := int(at / bucket)
	for len(*tl) <= i {
		*tl = append(*tl, 0)
	}
	(*tl)[i]++
}

func rusage() (user, sys float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return tv(ru.Utime), tv(ru.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "etcdload: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	endpoints := flag.String("endpoints", "127.0.0.1:2379", "comma-separated client endpoints")
	op := flag.String("op", "put", "put | get | ycsb (a mix: -read, -update, -insert, -rmw shares)")
	readShare := flag.Float64("read", 0, "ycsb: share of linearizable reads")
	updateShare := flag.Float64("update", 0, "ycsb: share of blind updates of existing keys")
	insertShare := flag.Float64("insert", 0, "ycsb: share of inserts of new keys")
	rmwShare := flag.Float64("rmw", 0, "ycsb: share of read-modify-writes (get, then a put conditional on the key's mod revision)")
	rate := flag.Float64("rate", 0, "total requests per second over all workers (0: as fast as they go)")
	conns := flag.Int("conns", 4, "number of clientv3 clients (gRPC connections); workers are spread over them")
	clients := flag.Int("clients", 64, "concurrent workers (requests in flight)")
	duration := flag.Duration("duration", 5*time.Second, "load duration (ignored when -total > 0)")
	total := flag.Int64("total", 0, "total requests to issue (0: run for -duration)")
	keySpace := flag.Int("key-space", 10000, "keys are key-00000000 .. key-(N-1), picked uniformly")
	valueSize := flag.Int("value-size", 256, "PUT value size in bytes")
	// etcd 3.4 followers keep proposals they forwarded to a dead leader pending until the server's
	// own request timeout (5 s + 2 x election timeout = 7 s), so the client timeout bounds how long a
	// worker hangs after a leader kill before retrying on the new leader.
	timeout := flag.Duration("timeout", time.Second, "per-request timeout (then the worker counts an error and goes on)")
	backoff := flag.Duration("error-backoff", 10*time.Millisecond, "worker pause after a failed request (avoids spinning while no leader)")
	consistency := flag.String("consistency", "l", "GET consistency: l (linearizable) | s (serializable)")
	prefill := flag.Bool("prefill", false, "PUT every key once before a get run (untimed)")
	dialTimeout := flag.Duration("dial-timeout", 5*time.Second, "dial timeout")
	gapFrom := flag.Duration("gap-from", 0, "also report the longest completion gap ending after this offset (e.g. a kill's) and before it")
	flag.Parse()

	if *op != "put" && *op != "get" && *op != "ycsb" {
		fail("-op must be put, get or ycsb, got %q", *op)
	}
	shares := *readShare + *updateShare + *insertShare + *rmwShare
	if *op == "ycsb" && math.Abs(shares-1) > 1e-6 {
		fail("ycsb shares must add up to 1, got %v", shares)
	}
	if *conns < 1 || *clients < 1 || *keySpace < 1 || *valueSize < 0 {
		fail("-conns, -clients, -key-space must be >= 1 and -value-size >= 0")
	}
	eps := strings.Split(*endpoints, ",")

	cs := make([]*clientv3.Client, *conns)
	for i := range cs {
		c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: *dialTimeout})
		if err != nil {
			fail("connect: %v", err)
		}
		defer c.Close()
		cs[i] = c
	}

	value := strings.Repeat("v", *valueSize)
	key := func(i int) string { return fmt.Sprintf("key-%08d", i) }

	if (*op == "get" || *op == "ycsb") && *prefill {
		var next int64 = -1
		var wg sync.WaitGroup
		for w := 0; w < *clients; w++ {
			wg.Add(1)
			go func(c *clientv3.Client) {
				defer wg.Done()
				for {
					i := atomic.AddInt64(&next, 1)
					if i >= int64(*keySpace) {
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), *timeout)
					_, err := c.Put(ctx, key(int(i)), value)
					cancel()
					if err != nil {
						fail("prefill: %v", err)
					}
				}
			}(cs[w%len(cs)])
		}
		wg.Wait()
	}

	var getOpts []clientv3.OpOption
	if *consistency == "s" {
		getOpts = append(getOpts, clientv3.WithSerializable())
	}

	var issued int64
	var inserted int64 = int64(*keySpace)
	// With -rate each worker sends one request per interval (an open loop's pace, closed per worker).
	var interval time.Duration
	if *rate > 0 {
		interval = time.Duration(float64(*clients) / *rate * float64(time.Second))
	}
	workers := make([]*worker, *clients)
	var wg sync.WaitGroup
	u0, s0 := rusage()
	start := time.Now()
	// In -duration mode every request derives from runCtx, which is cancelled (not given a
	// deadline, so servers never see it as a gRPC deadline and answer "timed out" just before it)
	// when the time is up: requests still in flight then are neither counted nor timed, and the
	// run ends on time even when some requests hang on a killed leader.
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	if *total <= 0 {
		time.AfterFunc(*duration, stop)
	}
	for w := range workers {
		wk := &worker{}
		workers[w] = wk
		wg.Add(1)
		go func(c *clientv3.Client, seed int64) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(seed))
			nextAt := time.Now()
			for {
				if interval > 0 {
					nextAt = nextAt.Add(interval)
					if d := time.Until(nextAt); d > 0 {
						select {
						case <-time.After(d):
						case <-runCtx.Done():
							return
						}
					}
				}
				if *total > 0 && atomic.AddInt64(&issued, 1) > *total {
					return
				}
				if runCtx.Err() != nil {
					return
				}
				k := key(rnd.Intn(*keySpace))
				ctx, cancel := context.WithTimeout(runCtx, *timeout)
				t0 := time.Now()
				var err error
				switch *op {
				case "put":
					_, err = c.Put(ctx, k, value)
				case "get":
					_, err = c.Get(ctx, k, getOpts...)
				default:
					err = ycsbOp(ctx, c, rnd, k, value, getOpts, *readShare, *updateShare, *insertShare, &inserted, key)
				}
				t1 := time.Now()
				cancel()
				at := t1.Sub(start)
				if err != nil {
					if runCtx.Err() != nil {
						return // cut off by the end of the run, not a failure
					}
					wk.errors++
					wk.mark(&wk.errTime, at)
					if len(wk.errSample) < 3 {
						wk.errSample = append(wk.errSample, err.Error())
					}
					if *backoff > 0 {
						select {
						case <-time.After(*backoff):
						case <-runCtx.Done():
						}
					}
					continue
				}
				wk.latencies = append(wk.latencies, t1.Sub(t0))
				wk.doneAt = append(wk.doneAt, at)
				wk.mark(&wk.timeline, at)
			}
		}(cs[w%len(cs)], int64(w)+time.Now().UnixNano())
	}
	wg.Wait()
	elapsed := time.Since(start)
	if *total <= 0 && elapsed > *duration {
		elapsed = *duration // workers may notice the deadline a few microseconds late
	}
	u1, s1 := rusage()

	var lat, done []time.Duration
	res := result{
		Op: *op, Endpoints: len(eps), Conns: *conns, Clients: *clients, ValueSize: *valueSize, KeySpace: *keySpace,
		Seconds: elapsed.Seconds(), CPUUser: u1 - u0, CPUSys: s1 - s0, CPUSeconds: (u1 - u0) + (s1 - s0),
		Timeline:      make([]int64, int((elapsed+bucket-1)/bucket)),
		ErrorTimeline: make([]int64, int((elapsed+bucket-1)/bucket)),
		ErrorSamples:  []string{},
	}
	seen := map[string]bool{}
	for _, wk := range workers {
		lat = append(lat, wk.latencies...)
		done = append(done, wk.doneAt...)
		res.Errors += wk.errors
		for i, n := range wk.timeline {
			if i < len(res.Timeline) {
				res.Timeline[i] += n
			}
		}
		for i, n := range wk.errTime {
			if i < len(res.ErrorTimeline) {
				res.ErrorTimeline[i] += n
			}
		}
		for _, e := range wk.errSample {
			if !seen[e] && len(res.ErrorSamples) < 10 {
				seen[e] = true
				res.ErrorSamples = append(res.ErrorSamples, e)
			}
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	sort.Slice(done, func(i, j int) bool { return done[i] < done[j] })
	res.Ops = int64(len(lat))
	if elapsed > 0 {
		res.Throughput = math.Round(float64(res.Ops)/elapsed.Seconds()*10) / 10
	}
	res.P50Ms = ms(percentile(lat, 0.50))
	res.P99Ms = ms(percentile(lat, 0.99))
	if len(lat) > 0 {
		res.MaxMs = ms(lat[len(lat)-1])
	}
	// Longest interval with no successful completion, including the run's start and end.
	prev := time.Duration(0)
	var gap time.Duration
	for _, d := range append(done, elapsed) {
		if d-prev > gap {
			gap = d - prev
		}
		prev = d
	}
	res.MaxGapMs = ms(gap)
	if *gapFrom > 0 {
		prev = 0
		var after, before time.Duration
		for _, d := range append(done, elapsed) {
			if d > *gapFrom {
				if d-prev > after {
					after = d - prev
				}
			} else if prev > 0 && d-prev > before {
				before = d - prev
			}
			prev = d
		}
		res.MaxGapFromMs = ms(after)
		res.MaxGapBeforeMs = ms(before)
	}
	ut, st := rusage()
	res.CPUTotalSeconds = ut + st

	out, err := json.Marshal(res)
	if err != nil {
		fail("json: %v", err)
	}
	fmt.Println(string(out))
}

// ycsbOp runs one operation of the mix on key k: a read, a blind update, an insert of a new key, or a
// read-modify-write (a get, then a put conditional on the key's mod revision, retried on a conflict: etcd's
// optimistic transaction, so every system in the comparison commits RMWs only when conflict-free).
func ycsbOp(ctx context.Context, c *clientv3.Client, rnd *rand.Rand, k, value string, getOpts []clientv3.OpOption,
	read, update, insert float64, inserted *int64, key func(int) string) error {
	x := rnd.Float64()
	switch {
	case x < read:
		_, err := c.Get(ctx, k, getOpts...)
		return err
	case x < read+update:
		_, err := c.Put(ctx, k, value)
		return err
	case x < read+update+insert:
		_, err := c.Put(ctx, key(int(atomic.AddInt64(inserted, 1))), value)
		return err
	default:
		for {
			got, err := c.Get(ctx, k)
			if err != nil {
				return err
			}
			rev := int64(0)
			if len(got.Kvs) > 0 {
				rev = got.Kvs[0].ModRevision
			}
			r, err := c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", rev)).Then(clientv3.OpPut(k, value)).Commit()
			if err != nil {
				return err
			}
			if r.Succeeded {
				return nil
			}
		}
	}
}
