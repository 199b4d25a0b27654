import { describe, expect, it } from "vitest"
import { parseEtcdLoadOutput } from "./etcd-load.js"
import { parseRedisBenchmarkCsv } from "./redis.js"

describe("parseRedisBenchmarkCsv", () => {
  it("reads throughput and the latency percentiles of redis-benchmark 7 --csv", () => {
    const csv = [
      '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"',
      '"SET","87260.03","0.389","0.112","0.367","0.503","0.943","4.071"'
    ].join("\n")
    const r = parseRedisBenchmarkCsv(csv, 200_000, 2.2)
    expect(r.throughputPerSec).toBe(87260.03)
    expect(r.p50Ms).toBe(0.367)
    expect(r.p99Ms).toBe(0.943)
    expect(r.maxMs).toBe(4.071)
    expect(r.seconds).toBeCloseTo(200_000 / 87260.03)
    expect(r.clientCpuSeconds).toBe(2.2)
    expect(r.timeline100ms).toEqual([])
  })

  it("yields NaN percentiles when an older redis-benchmark prints only rps", () => {
    const r = parseRedisBenchmarkCsv('"test","rps"\n"GET","50000.00"\n', 1000, 0)
    expect(r.throughputPerSec).toBe(50_000)
    expect(r.p99Ms).toBeNaN()
  })

  it("rejects output without a result line", () => {
    expect(() => parseRedisBenchmarkCsv("ERROR: connection refused", 1, 0)).toThrow(/cannot parse/)
  })
})

describe("parseEtcdLoadOutput", () => {
  it("maps the etcdload JSON line to a LoadResult", () => {
    const line = JSON.stringify({
      ops: 100,
      errors: 2,
      seconds: 1,
      throughput: 100,
      p50Ms: 5,
      p99Ms: 9,
      maxMs: 12,
      maxGapMs: 30,
      cpuSeconds: 0.25,
      timeline100ms: [10, 10, 0, 80],
      errorSamples: ["etcdserver: no leader"]
    })
    const r = parseEtcdLoadOutput(`some noise\n${line}\n`)
    expect(r).toMatchObject({ ops: 100, throughputPerSec: 100, errors: 2, clientCpuSeconds: 0.25, maxGapMs: 30 })
    expect(r.timeline100ms).toEqual([10, 10, 0, 80])
  })
})
