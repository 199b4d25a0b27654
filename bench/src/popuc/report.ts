/** The `popuc` suite's report: ratios over interleaved rounds, figures, curves and tables into popuc.json. */
import {
  type Curve,
  type CurvePoint,
  figureOf,
  type MachineReading,
  machineNow,
  type Round,
  ratioOf,
  writeResult
} from "../harness/index.js"
import { printTable } from "../report.js"
import { sizesCostResults } from "./cost-report.js"
import type { ReefSize } from "./group-sizes.js"
import type { EtcdRound, EtcdSize, measureRedis } from "./peers.js"
import type { Plan } from "./plan.js"
import type { RejoinResult } from "./rejoin.js"
import type { RoundCloseRun } from "./round-close.js"
import type { stallWholeGroup } from "./stalls.js"

type SizesRound = Round<{ reef: ReadonlyArray<ReefSize>; etcd: EtcdRound }>
type TimedRound = Round<{ timer: RoundCloseRun; allHeard: RoundCloseRun }>

export interface PopucResults {
  readonly sizes: ReadonlyArray<SizesRound>
  readonly redis: Awaited<ReturnType<typeof measureRedis>>
  readonly timed: ReadonlyArray<TimedRound>
  readonly stalls: import("effect/Effect").Effect.Success<ReturnType<typeof stallWholeGroup>>
  readonly rejoin: RejoinResult
}

const reefAt = (v: SizesRound["values"], n: number): ReefSize => {
  const s = v.reef.find((x) => x.n === n)
  if (s === undefined) throw new Error(`no Reef run at N = ${n}`)
  return s
}
const etcdAt = (v: SizesRound["values"], n: number): EtcdSize => {
  const s = v.etcd.sizes.find((x) => x.n === n)
  if (s === undefined) throw new Error(`no etcd run at N = ${n}`)
  return s
}

export const reportPopuc = async (plan: Plan, quick: boolean, started: MachineReading, results: PopucResults) => {
  const { sizes, redis, timed, stalls, rejoin } = results
  const same = {
    inFlight: plan.concurrency,
    valueBytes: 256,
    keySpace: 10_000,
    warmUpMs: plan.warmUpMs,
    durationMs: plan.loadMs,
    durability: "in memory (etcd --unsafe-no-fsync)",
    clusters: "fresh per round, loopback",
    clients: "Reef: the Node KV client in the bench process (framed sessions); etcd: its Go clientv3 (etcdload)"
  }
  const failoverConditions = {
    n: 5,
    inFlight: plan.concurrency,
    warmUpMs: plan.warmUpMs,
    killAtMs: plan.failover.killAtMs,
    loadAfterKillMs: plan.failover.afterMs,
    clients: "on every member, the killed one included; a failed request moves on to the next member",
    metric: "longest interval between successive completed writes (all clients) that ends after the kill",
    killed: "Reef: one replica (no leader); etcd: the leader"
  }
  const cost = sizesCostResults(plan, sizes)
  const ratios = {
    ...cost.ratios,
    setThroughputVsEtcdN5: ratioOf(
      {
        numerator: `Reef Set, N = 5, colocated, ${plan.concurrency} in flight (writes/s)`,
        denominator: `etcd PUT, N = 5, ${plan.concurrency} in flight (writes/s)`,
        conditions: same,
        operatingPoint: `N = 5, ${plan.concurrency} writes in flight on both`
      },
      sizes,
      (v) => reefAt(v, 5).modes.colocated!.set.perSec,
      (v) => etcdAt(v, 5).put.perSec
    ),
    setThroughputVsEtcdN5Saturated: ratioOf(
      {
        numerator: `Reef Set, N = 5, colocated, ${plan.saturation} in flight (writes/s)`,
        denominator: `etcd PUT, N = 5, ${plan.saturation} in flight (writes/s)`,
        conditions: { ...same, inFlight: plan.saturation },
        operatingPoint: `N = 5, ${plan.saturation} writes in flight on both (both CPU-bound)`
      },
      sizes,
      (v) => reefAt(v, 5).saturated!.perSec,
      (v) => etcdAt(v, 5).saturated!.perSec
    ),
    setThroughputN9OverN3Colocated: ratioOf(
      {
        numerator: `Reef Set, N = 9, colocated, ${plan.concurrency} in flight (writes/s)`,
        denominator: `Reef Set, N = 3, colocated, ${plan.concurrency} in flight (writes/s)`,
        conditions: same
      },
      sizes,
      (v) => reefAt(v, 9).modes.colocated!.set.perSec,
      (v) => reefAt(v, 3).modes.colocated!.set.perSec
    ),
    failoverStallEtcdOverReef: ratioOf(
      {
        numerator: "etcd leader kill, default raft timing (heartbeat 100 ms, election 1000 ms): stall (ms)",
        denominator: "Reef replica kill: stall (ms)",
        conditions: failoverConditions
      },
      sizes,
      (v) => etcdAt(v, 5).failover!.stallMs,
      (v) => reefAt(v, 5).failover!.stallMs
    ),
    failoverStallEtcdTunedOverReef: ratioOf(
      {
        numerator: `etcd leader kill, raft tuned to loopback (heartbeat ${plan.etcdTunedRaft.heartbeatMs} ms, election ${plan.etcdTunedRaft.electionMs} ms): stall (ms)`,
        denominator: "Reef replica kill: stall (ms)",
        conditions: failoverConditions
      },
      sizes,
      (v) => v.etcd.tuned.failover.stallMs,
      (v) => reefAt(v, 5).failover!.stallMs
    ),
    setThroughputAllHeardOverTimedN5: ratioOf(
      {
        numerator: `Reef Set, N = 5, rounds closed on all heard, ${plan.concurrency} in flight (writes/s)`,
        denominator: `Reef Set, N = 5, the paper's timed rounds, ${plan.concurrency} in flight (writes/s)`,
        conditions: { ...same, clients: "the Node KV client" }
      },
      timed,
      (v) => v.allHeard.setPerSec,
      (v) => v.timer.setPerSec
    ),
    loneWriteLatencyTimedOverAllHeardN5: ratioOf(
      {
        numerator: "one client's Set p50, N = 5, timed rounds (ms)",
        denominator: "one client's Set p50, N = 5, rounds closed on all heard (ms)",
        conditions: { ...same, inFlight: 1, clients: "the Node KV client", durationMs: Math.min(plan.loadMs, 3_000) }
      },
      timed,
      (v) => v.timer.loneSetP50Ms,
      (v) => v.allHeard.loneSetP50Ms
    )
  }

  // ---- figures: median and min–max over rounds --------------------------------------------------------------
  const reefFig = (n: number, f: (s: ReefSize) => number) => figureOf(sizes, (v) => f(reefAt(v, n)))
  const etcdFig = (n: number, f: (s: EtcdSize) => number) => figureOf(sizes, (v) => f(etcdAt(v, n)))
  const kv = Object.fromEntries(
    plan.ns.flatMap((n) =>
      plan.modesFor(n).map((mode) => [
        `n${n}.${mode}`,
        {
          setPerSec: reefFig(n, (s) => s.modes[mode]!.set.perSec),
          setP50Ms: reefFig(n, (s) => s.modes[mode]!.set.p50Ms),
          setP99Ms: reefFig(n, (s) => s.modes[mode]!.set.p99Ms),
          getPerSec: reefFig(n, (s) => s.modes[mode]!.get.perSec),
          getP50Ms: reefFig(n, (s) => s.modes[mode]!.get.p50Ms),
          getP99Ms: reefFig(n, (s) => s.modes[mode]!.get.p99Ms),
          errors: sizes.reduce((sum, r) => sum + reefAt(r.values, n).modes[mode]!.set.errors, 0),
          clientCpuCores: reefFig(n, (s) => s.modes[mode]!.set.clientCpuCores)
        }
      ])
    )
  )
  const etcd = Object.fromEntries(
    plan.etcdNs.map((n) => [
      `n${n}`,
      {
        putPerSec: etcdFig(n, (s) => s.put.perSec),
        getPerSec: etcdFig(n, (s) => s.get.perSec),
        putP50Ms: etcdFig(n, (s) => s.put.p50Ms),
        putP99Ms: etcdFig(n, (s) => s.put.p99Ms),
        clientCpuCores: etcdFig(n, (s) => s.put.clientCpuCores)
      }
    ])
  )
  const engine = Object.fromEntries(
    plan.ns.map((n) => [
      `n${n}`,
      {
        ...sizes[0]!.values.reef.find((s) => s.n === n)!.engine,
        roundsPerInstance: reefFig(n, (s) => s.engine.roundsPerInstance ?? Number.NaN),
        roundTimeP50Ms: reefFig(n, (s) => s.engine.roundTimeP50Ms ?? Number.NaN),
        roundTimeP99Ms: reefFig(n, (s) => s.engine.roundTimeP99Ms ?? Number.NaN),
        selfQuitsPerRound: sizes.map((r) => reefAt(r.values, n).engine.selfQuits)
      }
    ])
  )
  const metrics = {
    costPerWrite: cost.metrics,
    engine,
    kv,
    etcd,
    etcdTunedN5: {
      raft: plan.etcdTunedRaft,
      putPerSec: figureOf(sizes, (v) => v.etcd.tuned.put.perSec)
    },
    etcdFsync: "disabled (--unsafe-no-fsync): POPUC keeps its state in memory like the paper",
    redis: { ...redis, note: "unreplicated, one run: a reference line, not a ratio" },
    saturation: {
      inFlight: plan.saturation,
      reefSetPerSec: reefFig(5, (s) => s.saturated!.perSec),
      reefSetP99Ms: reefFig(5, (s) => s.saturated!.p99Ms),
      reefSelfQuits: sizes.map((r) => reefAt(r.values, 5).saturated!.selfQuits),
      etcdPutPerSec: etcdFig(5, (s) => s.saturated!.perSec),
      etcdPutP99Ms: etcdFig(5, (s) => s.saturated!.p99Ms)
    },
    failover: {
      ...failoverConditions,
      reef: sizes.map((r) => reefAt(r.values, 5).failover),
      etcdDefault: sizes.map((r) => etcdAt(r.values, 5).failover),
      etcdTuned: sizes.map((r) => r.values.etcd.tuned.failover)
    },
    roundClose: {
      default: "allHeard: a round closes once every peer not suspected is heard from (timer: the paper's timed rounds)",
      rounds: timed.map((r) => r.values)
    },
    stalls,
    rejoinServingMs: rejoin.rejoinServingMs,
    rejoinCaughtUpMs: rejoin.rejoinCaughtUpMs,
    rejoin: {
      ...rejoin,
      goalMs: 2_000,
      note: "one kill and restart, from the restarted process's spawn; loadAverage1m tells an idle machine (< 1 on 2 cores) from a loaded one"
    },
    kvTransport: "session (reef.v1.KV/Session, one pipelined stream per client and replica)",
    latencies:
      "hdr-histogram-js per run (Reef), exact sorted samples (etcdload); p50/p99 per round, median and min–max over rounds",
    plan: {
      ns: plan.ns,
      etcdNs: plan.etcdNs,
      concurrency: plan.concurrency,
      loadMs: plan.loadMs,
      warmUpMs: plan.warmUpMs
    }
  }

  // ---- curves -------------------------------------------------------------------------------------------------
  const point = (series: string, x: number, f: { median: number; min: number; max: number }): CurvePoint => ({
    series,
    x,
    y: f.median,
    yMin: f.min,
    yMax: f.max
  })
  const modes = [...new Set(plan.ns.flatMap((n) => plan.modesFor(n)))]
  const throughput: Curve = {
    title: `Set throughput against group size (${plan.concurrency} in flight, median and min–max of ${sizes.length} rounds)`,
    x: { title: "replicas (N)", ticks: plan.ns },
    y: { title: "writes per second", scale: "log" },
    headline: `N = 5, ${plan.concurrency} in flight on both`,
    points: [
      ...modes.flatMap((mode) =>
        plan.ns
          .filter((n) => plan.modesFor(n).includes(mode))
          .map((n) => point(`Reef ${mode}`, n, kv[`n${n}.${mode}`]!.setPerSec))
      ),
      ...plan.etcdNs.map((n) => point("etcd (no fsync)", n, etcd[`n${n}`]!.putPerSec)),
      ...plan.ns.map((n) => ({ series: "Redis (1 node, unreplicated)", x: n, y: redis.setPerSec }))
    ]
  }
  const latency: Curve = {
    title: `Set latency against group size (${plan.concurrency} in flight)`,
    x: { title: "replicas (N)", ticks: plan.ns },
    y: { title: "latency (ms)", scale: "log" },
    points: [
      ...plan.ns.map((n) => point("Reef colocated p50", n, kv[`n${n}.colocated`]!.setP50Ms)),
      ...plan.ns.map((n) => point("Reef colocated p99", n, kv[`n${n}.colocated`]!.setP99Ms)),
      ...plan.etcdNs.map((n) => point("etcd PUT p50", n, etcd[`n${n}`]!.putP50Ms)),
      ...plan.etcdNs.map((n) => point("etcd PUT p99", n, etcd[`n${n}`]!.putP99Ms))
    ]
  }

  // ---- tables ---------------------------------------------------------------------------------------------------
  const med = (f: { median: number }) => f.median
  printTable(
    `Replicated KV (Reef POPUC), ${plan.concurrency} in flight: medians of ${sizes.length} rounds`,
    ["N", "mode", "set/s", "set p50", "set p99", "get/s", "get p50", "get p99", "errors"],
    Object.entries(kv).map(([key, k]) => [
      key.split(".")[0]!.slice(1),
      key.split(".")[1],
      med(k.setPerSec),
      med(k.setP50Ms),
      med(k.setP99Ms),
      med(k.getPerSec),
      med(k.getP50Ms),
      med(k.getP99Ms),
      k.errors
    ])
  )
  printTable(
    "etcd (no fsync, Go client), same concurrency: medians",
    ["N", "put/s", "get/s", "put p50", "put p99", "client cores"],
    Object.entries(etcd).map(([n, e]) => [
      n.slice(1),
      med(e.putPerSec),
      med(e.getPerSec),
      med(e.putP50Ms),
      med(e.putP99Ms),
      med(e.clientCpuCores)
    ])
  )
  printTable(
    "Failover (N = 5): longest completion gap ending after the kill, per round (ms)",
    ["round", "reef", "etcd default", "etcd tuned", "reef gap before", "etcd gap before", "reef errors", "etcd errors"],
    sizes.map((r, i) => {
      const reef = reefAt(r.values, 5).failover!
      const e = etcdAt(r.values, 5).failover!
      return [
        i + 1,
        reef.stallMs,
        e.stallMs,
        r.values.etcd.tuned.failover.stallMs,
        reef.gapBeforeKillMs,
        e.gapBeforeKillMs,
        reef.errors,
        e.errors
      ]
    })
  )
  printTable(
    "Round close (N = 5), per round",
    ["round", "timer set/s", "allHeard set/s", "timer 1-client p50", "allHeard 1-client p50", "self-quits"],
    timed.map((r, i) => [
      i + 1,
      r.values.timer.setPerSec,
      r.values.allHeard.setPerSec,
      r.values.timer.loneSetP50Ms,
      r.values.allHeard.loneSetP50Ms,
      r.values.timer.selfQuits + r.values.allHeard.selfQuits
    ])
  )
  printTable(
    `Whole-group stalls (N = 3): every replica paused ${stalls.pauseMs} ms every ${stalls.everyMs} ms`,
    ["pauses", "set/s", "errors", "self-quits"],
    [[stalls.pauses, stalls.setPerSec, stalls.errors, stalls.selfQuits]]
  )
  printTable(
    "Rejoin (N = 3): kill -9 one replica, start it again",
    ["serving ms", "caught up ms", "CPU to serving ms", "first output ms", "ready line ms", "behind", "load avg 1m"],
    [
      [
        rejoin.rejoinServingMs,
        rejoin.rejoinCaughtUpMs,
        rejoin.cpuToServingMs,
        rejoin.firstOutputMs,
        rejoin.readyLineMs,
        rejoin.instancesBehind,
        rejoin.loadAverage1m
      ]
    ]
  )
  cost.print()
  printTable(
    "Ratios (median and min–max over interleaved rounds)",
    ["ratio", "median", "min", "max"],
    Object.entries(ratios).map(([n, r]) => [n, r.median, r.min, r.max])
  )
  const path = await writeResult({
    suite: "popuc",
    quick,
    command: `pnpm bench popuc${quick ? " --quick" : ""}`,
    machine: machineNow(started),
    ratios,
    metrics,
    curves: { throughput, latency, costCpu: cost.curves.cpu, costBytes: cost.curves.bytes }
  })
  console.log(`wrote ${path}`)
}
