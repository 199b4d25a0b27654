/**
 * Suite `popuc`: the POPUC replicated KV against etcd (same N, loopback, Go client, --unsafe-no-fsync since
 * POPUC keeps state in memory) and an unreplicated Redis, all in the same run on this machine.
 *
 *   engine     instances/s, rounds and ms per instance, round-time p50/p99/max (no failures), per N
 *   kv         Set/Get throughput and p50/p99 for N = 3, 5, 7, 9 in each deployment mode (128 in flight)
 *   saturation N = 5 Set throughput with 1,024 writes in flight, next to etcd's PUT with as many: their peak
 *              rates, at a load both are CPU-bound at
 *   timed      N = 5 with the paper's timed rounds (`--round-close timer`) next to the default, rounds closed
 *              once every peer is heard from: Set throughput at 128 in flight, and one client's write latency
 *   peers      etcd PUT/GET per N (same concurrency), Redis SET/GET
 *   failover   kill one replica of 5 under load (and again with 8 writes in flight, where the stall is not
 *              hidden in the saturated machine's gaps): stall and throughput before/after, and how many
 *              survivors found the victim's connection gone; the same with etcd's leader
 *   stalls     N = 3 under load while every replica process is paused (SIGSTOP) for 60 ms every 400 ms, the
 *              way a shared machine or a VM stalls a whole group at once: self-quits and throughput
 *
 * Writes bench/results/popuc.json and bench/results/popuc.svg (throughput vs N per system).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { startNatsServer } from "@reef/kernel"
import type { DeploymentMode } from "@reef/replica"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type KvLoadOptions, longestGapMs, rateBetween, runKvLoad } from "./kv-load.js"
import {
  buildEtcdLoad,
  etcdLoadAvailable,
  longestStallMs,
  runEtcdLoad,
  runRedisLoad,
  startEtcdCluster,
  startRedis
} from "./peers/index.js"
import { engineStates, type Group, largestRssMb, startGroup } from "./popuc-group.js"
import { machine, printTable, resultsDir, round, writeResult } from "./report.js"
import { lineChart } from "./svg.js"

const MODES: ReadonlyArray<DeploymentMode> = ["colocated", "balanced", "leader"]

interface Plan {
  readonly ns: ReadonlyArray<number>
  readonly modesFor: (n: number) => ReadonlyArray<DeploymentMode>
  readonly etcdNs: ReadonlyArray<number>
  readonly loadMs: number
  readonly concurrency: number
  /** In flight for the N = 5 saturation comparison with etcd. */
  readonly saturation: number
  /**
   * Unmeasured load on a fresh group before its first measurement: V8 compiles the hot paths of 2N threads
   * (host and engine of every replica) during the first seconds of load, which the first run of a group
   * otherwise paid alone (the quick run's 1.5 s at N = 5 measured ~1,600 writes/s, its failover run on the
   * same, warm group ~3,500/s before the kill). On two shared cores it takes longer than it looks: after a
   * 3 s warm-up, successive 5 s runs on one N = 5 group measured 4,381, 4,779, 5,344, 5,181, 5,630 and
   * 5,371 writes/s, whatever the mode (colocated and balanced alternating), and after 10 s still 4,485,
   * 5,138, 5,630. So the full run warms each group for 15 s, and the mode measured first (colocated, the
   * headline ratio) is no longer the one measured coldest.
   */
  readonly warmUpMs: number
  /**
   * When idle RSS is read (the full run only): `settleMs` after a group starts, once the allocator has
   * returned start-up garbage (JEMALLOC_CONF in @reef/devkit: 5 s decay), and after its loads once the largest
   * replica is back within IDLE_RSS_BUDGET_MB, polled for at most `afterLoadMaxMs`. V8's memory reducer takes
   * its time: the reducer's compacting GCs ran 16-18 s after the load at N = 3 (--trace-gc), while at N = 7
   * the replica that leader mode had sent every request stayed at ~157 MB for ~105 s, then dropped to 116 MB
   * (the others were at 114-117 MB after 30 s).
   */
  readonly idleRss?: { readonly settleMs: number; readonly afterLoadMaxMs: number }
}

const planFor = (quick: boolean): Plan =>
  quick
    ? {
        ns: [3, 5, 9],
        modesFor: () => ["colocated"],
        etcdNs: [5],
        loadMs: 1_500,
        concurrency: 128,
        saturation: 1_024,
        warmUpMs: 1_500
      }
    : {
        ns: [3, 5, 7, 9],
        modesFor: () => MODES,
        etcdNs: [3, 5, 7, 9],
        loadMs: 5_000,
        concurrency: 128,
        saturation: 1_024,
        warmUpMs: 15_000,
        idleRss: { settleMs: 10_000, afterLoadMaxMs: 180_000 }
      }

const sumEngines = (states: Effect.Effect.Success<ReturnType<typeof engineStates>>) => {
  let instances = 0
  let rounds = 0
  let selfQuits = 0
  let goneReports = 0
  const p50: Array<number> = []
  const p99: Array<number> = []
  const max: Array<number> = []
  let period = 0
  for (const s of states) {
    if (s._tag === "None" || s.value.engine === undefined) continue
    const e = s.value.engine
    instances = Math.max(instances, e.instancesDecided)
    rounds = Math.max(rounds, e.roundsDecided)
    selfQuits += e.selfQuits
    goneReports += e.goneReports
    p50.push(e.roundTimeP50Ms)
    p99.push(e.roundTimeP99Ms)
    max.push(e.roundTimeMaxMs)
    period = e.roundPeriodMs
  }
  return {
    instances,
    rounds,
    selfQuits,
    goneReports,
    roundTimeP50Ms: Math.max(...p50, 0),
    roundTimeP99Ms: Math.max(...p99, 0),
    roundTimeMaxMs: Math.max(...max, 0),
    roundPeriodMs: period
  }
}

/** Writes in flight for the failover run at light load. */
const FAILOVER_LIGHT_IN_FLIGHT = 8

/** The guide's budget for an idle actor process. */
export const IDLE_RSS_BUDGET_MB = 120

/** The group's largest RSS after `waitMs` of idling; nothing (no wait) when the plan reads no idle RSS. */
const idleRssAfter = (group: Group, waitMs: number | undefined) =>
  waitMs === undefined
    ? Effect.succeed(undefined)
    : Effect.map(Effect.sleep(Duration.millis(waitMs)), () => largestRssMb(group, "VmRSS"))

/**
 * After a load: the group's largest RSS once it is within IDLE_RSS_BUDGET_MB (polled every 5 s), and how long
 * that took; at `maxWaitMs`, whatever it is then. Nothing (no wait) when the plan reads no idle RSS.
 */
const idleRssAfterLoad = (group: Group, maxWaitMs: number | undefined) =>
  maxWaitMs === undefined
    ? Effect.succeed(undefined)
    : Effect.gen(function* () {
        const started = performance.now()
        for (;;) {
          yield* Effect.sleep("5 seconds")
          const mb = largestRssMb(group, "VmRSS")
          const waitedMs = performance.now() - started
          if (mb <= IDLE_RSS_BUDGET_MB || waitedMs >= maxWaitMs) return { mb, seconds: round(waitedMs / 1000, 0) }
        }
      })

export const run = async (quick: boolean) => {
  const plan = planFor(quick)
  const metrics: Record<string, unknown> = {}
  const kvRows: Array<ReadonlyArray<unknown>> = []
  const engineRows: Array<ReadonlyArray<unknown>> = []
  const throughputByMode = new Map<string, Array<[number, number]>>()
  let failover: Partial<Record<string, number>> = {}
  let failoverLight: Partial<Record<string, number>> = {}
  let saturated: Record<string, number> = {}
  const timed: Record<string, Record<string, number>> = {}
  let stalls: Record<string, number> = {}
  /** Colocated writes, `plan.concurrency` in flight unless `options` says otherwise. */
  const writes = (addresses: ReadonlyArray<string>, durationMs: number, options: Partial<KvLoadOptions> = {}) =>
    runKvLoad({ addresses, mode: "colocated", op: "set", concurrency: plan.concurrency, durationMs, ...options })
  const warmUp = (addresses: ReadonlyArray<string>) => writes(addresses, plan.warmUpMs)
  /**
   * Failover: colocated load on the four survivors of a group of five, r5 killed three seconds in (enough
   * decided instances before the kill to know the normal gap between completions).
   */
  const killOneOfFive = (group: Group, concurrency: number) =>
    Effect.gen(function* () {
      const killAtMs = 3_000
      const durationMs = killAtMs + Math.max(3_000, plan.loadMs)
      const victim = group.children[4]!
      const beforeKill = sumEngines(yield* engineStates(group))
      const roundPeriodMs = beforeKill.roundPeriodMs
      const load = yield* writes(group.addresses, durationMs, {
        concurrency,
        replicas: [0, 1, 2, 3],
        during: { afterMs: killAtMs, action: async () => void victim.kill("SIGKILL") }
      })
      // Completions arrive in bursts, one per decided instance, so a closed-loop client sees gaps of about
      // two instances with no failure at all. What the failure costs is how much longer the longest gap
      // after the kill is than the longest gap before it, in the same run (warm-up second excluded).
      const gapBeforeMs = longestGapMs(load.timeline10ms.slice(0, killAtMs / 10), 1_000)
      const gapAfterMs = longestGapMs(load.timeline10ms, killAtMs)
      const stallMs = Math.max(0, gapAfterMs - gapBeforeMs)
      const survivors = sumEngines(yield* engineStates({ ...group, addresses: group.addresses.slice(0, 4) }))
      return {
        inFlight: concurrency,
        reefGapBeforeKillMs: gapBeforeMs,
        reefGapAfterKillMs: gapAfterMs,
        reefStallMs: stallMs,
        reefRoundPeriodMs: roundPeriodMs,
        reefStallRounds: round(stallMs / Math.max(roundPeriodMs, 1e-9), 2),
        reefSetPerSecBefore: round(rateBetween(load.timeline10ms, 0, killAtMs), 0),
        reefSetPerSecAfter: round(rateBetween(load.timeline10ms, killAtMs + 1_000, durationMs), 0),
        // Survivors that found the victim's connection gone (engine-loop.ts) rather than waiting out a timer.
        reefPeersReportedGone: survivors.goneReports - beforeKill.goneReports,
        reefSelfQuits: survivors.selfQuits - beforeKill.selfQuits
      }
    })

  const reef = Effect.gen(function* () {
    const nats = yield* startNatsServer({ jetstream: false })
    for (const n of plan.ns) {
      yield* Effect.gen(function* () {
        const group = yield* startGroup(nats.url, n, `g${n}`)
        // Idle engine rate: instances decided over one second without load.
        const idle0 = sumEngines(yield* engineStates(group))
        yield* Effect.sleep("1 second")
        const idle1 = sumEngines(yield* engineStates(group))
        const idleRssMb = yield* idleRssAfter(group, plan.idleRss?.settleMs)
        yield* warmUp(group.addresses)
        const before = sumEngines(yield* engineStates(group))
        const busySince = performance.now()
        for (const mode of plan.modesFor(n)) {
          const sets = yield* runKvLoad({
            addresses: group.addresses,
            mode,
            op: "set",
            concurrency: plan.concurrency,
            durationMs: plan.loadMs
          })
          const gets = yield* runKvLoad({
            addresses: group.addresses,
            mode,
            op: "get",
            concurrency: plan.concurrency,
            durationMs: plan.loadMs
          })
          metrics[`kv.n${n}.${mode}`] = {
            setPerSec: round(sets.throughputPerSec, 0),
            setP50Ms: round(sets.p50Ms),
            setP99Ms: round(sets.p99Ms),
            setErrors: sets.errors,
            getPerSec: round(gets.throughputPerSec, 0),
            getP50Ms: round(gets.p50Ms),
            getP99Ms: round(gets.p99Ms),
            getErrors: gets.errors,
            clientCpuCores: round((sets.clientCpuSeconds + gets.clientCpuSeconds) / (sets.seconds + gets.seconds))
          }
          kvRows.push([
            n,
            mode,
            sets.throughputPerSec,
            sets.p50Ms,
            sets.p99Ms,
            gets.throughputPerSec,
            gets.p50Ms,
            gets.p99Ms,
            sets.errors + gets.errors
          ])
          const points = throughputByMode.get(mode) ?? []
          points.push([n, sets.throughputPerSec])
          throughputByMode.set(mode, points)
        }
        const after = sumEngines(yield* engineStates(group))
        const busyInstances = after.instances - before.instances
        const busySeconds = (performance.now() - busySince) / 1000
        const peakRssMb = largestRssMb(group, "VmHWM")
        // The budget is for an idle actor process, and one that has served a load is idle again too.
        const idleAfterLoad = yield* idleRssAfterLoad(group, plan.idleRss?.afterLoadMaxMs)
        const engine = {
          idleInstancesPerSec: round(idle1.instances - idle0.instances, 0),
          roundsPerInstance: round(after.instances > 0 ? after.rounds / after.instances : 0, 3),
          // Measured under load (gaps between instances included): rounds close when all peers are heard from.
          instanceMs: round(busyInstances > 0 ? (busySeconds * 1000) / busyInstances : 0, 2),
          roundPeriodMs: round(after.roundPeriodMs, 2),
          roundTimeP50Ms: round(after.roundTimeP50Ms, 2),
          roundTimeP99Ms: round(after.roundTimeP99Ms, 2),
          roundTimeMaxMs: round(after.roundTimeMaxMs, 2),
          instancesUnderLoad: busyInstances,
          selfQuits: after.selfQuits,
          replicaPeakRssMb: peakRssMb,
          replicaIdleRssMb: idleRssMb,
          replicaIdleRssAfterLoadMb: idleAfterLoad?.mb,
          replicaIdleRssAfterLoadSeconds: idleAfterLoad?.seconds
        }
        metrics[`engine.n${n}`] = engine
        engineRows.push([
          n,
          engine.idleInstancesPerSec,
          engine.roundsPerInstance,
          engine.roundPeriodMs,
          engine.roundTimeP50Ms,
          engine.roundTimeP99Ms,
          engine.roundTimeMaxMs,
          engine.selfQuits,
          engine.replicaPeakRssMb,
          engine.replicaIdleRssMb ?? "",
          engine.replicaIdleRssAfterLoadMb ?? "",
          engine.replicaIdleRssAfterLoadSeconds ?? ""
        ])

        if (n === 5) {
          // Saturation: as many writes in flight as the etcd comparison below uses (engine stats around it,
          // so its self-quits are told apart from the failure-free runs above).
          const beforeSaturation = sumEngines(yield* engineStates(group))
          const load = yield* writes(group.addresses, plan.loadMs, { concurrency: plan.saturation })
          const afterSaturation = sumEngines(yield* engineStates(group))
          saturated = {
            inFlight: plan.saturation,
            reefSetPerSec: round(load.throughputPerSec, 0),
            reefSetP50Ms: round(load.p50Ms),
            reefSetP99Ms: round(load.p99Ms),
            reefErrors: load.errors,
            reefSelfQuits: afterSaturation.selfQuits - beforeSaturation.selfQuits,
            reefClientCpuCores: round(load.clientCpuSeconds / load.seconds)
          }
        }

        if (n === 5) failover = yield* killOneOfFive(group, plan.concurrency)
      }).pipe(Effect.scoped)
    }
    // The same kill with few writes in flight: completions are then spaced by an instance (a few ms), not by
    // the saturated machine's 20-40 ms, so what the kill itself costs shows.
    yield* Effect.gen(function* () {
      const group = yield* startGroup(nats.url, 5, "failover-light")
      yield* warmUp(group.addresses)
      failoverLight = yield* killOneOfFive(group, FAILOVER_LIGHT_IN_FLIGHT)
    }).pipe(Effect.scoped)
    // Baseline: the paper's timed rounds next to the default, N = 5, on the same server.
    for (const roundClose of ["timer", "allHeard"] as const) {
      yield* Effect.gen(function* () {
        const group = yield* startGroup(nats.url, 5, `rc-${roundClose}`, ["--round-close", roundClose])
        yield* warmUp(group.addresses)
        const sets = yield* writes(group.addresses, plan.loadMs)
        const lone = yield* writes(group.addresses, Math.min(plan.loadMs, 3_000), { concurrency: 1 })
        const engines = sumEngines(yield* engineStates(group))
        timed[roundClose] = {
          setPerSec: round(sets.throughputPerSec, 0),
          setP50Ms: round(sets.p50Ms),
          loneSetP50Ms: round(lone.p50Ms),
          loneSetPerSec: round(lone.throughputPerSec, 0),
          roundTimeP50Ms: round(engines.roundTimeP50Ms, 2),
          selfQuits: engines.selfQuits
        }
      }).pipe(Effect.scoped)
    }
    // Whole-group stalls: every replica paused at once, again and again, under load. A replica that blamed
    // its peers for a stall they shared would self-quit (see the engine loop's stall grace).
    yield* Effect.gen(function* () {
      const group = yield* startGroup(nats.url, 3, "stalls")
      yield* warmUp(group.addresses)
      const before = sumEngines(yield* engineStates(group))
      const pauseMs = 60
      const everyMs = 400
      let pauses = 0
      const pauseAll = () => {
        pauses++
        for (const child of group.children) if (child.pid !== undefined) process.kill(child.pid, "SIGSTOP")
        setTimeout(() => {
          for (const child of group.children) if (child.pid !== undefined) process.kill(child.pid, "SIGCONT")
        }, pauseMs)
      }
      const load = yield* Effect.acquireUseRelease(
        Effect.sync(() => setInterval(pauseAll, everyMs)),
        () => writes(group.addresses, 2 * plan.loadMs),
        (timer) => Effect.sync(() => clearInterval(timer))
      )
      // The last pause must be over before the engines are asked for their state.
      yield* Effect.sleep(`${2 * pauseMs} millis`)
      const after = sumEngines(yield* engineStates(group))
      stalls = {
        n: 3,
        pauseMs,
        everyMs,
        pauses,
        setPerSec: round(load.throughputPerSec, 0),
        errors: load.errors,
        selfQuits: after.selfQuits - before.selfQuits
      }
    }).pipe(Effect.scoped)
  })
  await Effect.runPromise(Effect.scoped(reef as Effect.Effect<void, unknown, Scope.Scope>))

  // ---- peers ---------------------------------------------------------------------------------------------
  const etcd: Record<number, { put: number; get: number; putP50: number; putP99: number; clientCores: number }> = {}
  let etcdStallMs = Number.NaN
  if (!etcdLoadAvailable()) await buildEtcdLoad({ install: true })
  for (const n of plan.etcdNs) {
    const cluster = await startEtcdCluster({ n, unsafeNoFsync: true })
    try {
      const put = await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.loadMs })
      const get = await runEtcdLoad(cluster, { op: "get", concurrency: plan.concurrency, durationMs: plan.loadMs })
      etcd[n] = {
        put: put.throughputPerSec,
        get: get.throughputPerSec,
        putP50: put.p50Ms,
        putP99: put.p99Ms,
        clientCores: round(put.clientCpuSeconds / put.seconds)
      }
      if (n === 5) {
        const peak = await runEtcdLoad(cluster, { op: "put", concurrency: plan.saturation, durationMs: plan.loadMs })
        saturated = {
          ...saturated,
          etcdPutPerSec: round(peak.throughputPerSec, 0),
          etcdPutP50Ms: round(peak.p50Ms),
          etcdPutP99Ms: round(peak.p99Ms),
          etcdClientCpuCores: round(peak.clientCpuSeconds / peak.seconds)
        }
        const leader = await cluster.leader()
        const killAtMs = 2_000
        setTimeout(() => void cluster.kill(leader.name), killAtMs)
        const load = await runEtcdLoad(cluster, {
          op: "put",
          concurrency: plan.concurrency,
          durationMs: killAtMs + 5_000
        })
        etcdStallMs = load.maxGapMs ?? longestStallMs(load.timeline100ms)
      }
    } finally {
      await cluster.stop()
    }
  }
  const redis = await startRedis()
  const redisRequests = quick ? 50_000 : 200_000
  const redisSet = await runRedisLoad({
    port: redis.port,
    op: "set",
    concurrency: plan.concurrency,
    requests: redisRequests,
    serverPid: redis.pid
  })
  const redisGet = await runRedisLoad({
    port: redis.port,
    op: "get",
    concurrency: plan.concurrency,
    requests: redisRequests,
    serverPid: redis.pid
  })
  await redis.stop()

  // ---- report ----------------------------------------------------------------------------------------------
  const colocated = new Map(throughputByMode.get("colocated") ?? [])
  const n3 = colocated.get(3) ?? Number.NaN
  const n5 = colocated.get(5) ?? Number.NaN
  const n9 = colocated.get(9) ?? Number.NaN
  const firstEngine = metrics[`engine.n${plan.ns[0]}`] as { roundsPerInstance: number } | undefined
  const ratios = {
    roundsPerInstanceFailureFree: firstEngine?.roundsPerInstance ?? Number.NaN,
    setThroughputN9OverN3Colocated: round(n9 / n3, 3),
    setThroughputVsEtcdN5: round(n5 / (etcd[5]?.put ?? Number.NaN), 3),
    setThroughputVsEtcdN5Saturated: round(
      (saturated.reefSetPerSec ?? Number.NaN) / (saturated.etcdPutPerSec ?? Number.NaN),
      3
    ),
    setThroughputAllHeardOverTimedN5: round(
      (timed.allHeard?.setPerSec ?? Number.NaN) / (timed.timer?.setPerSec ?? Number.NaN),
      3
    ),
    loneWriteLatencyTimedOverAllHeardN5: round(
      (timed.timer?.loneSetP50Ms ?? Number.NaN) / (timed.allHeard?.loneSetP50Ms ?? Number.NaN),
      2
    ),
    failoverStallRounds: failover.reefStallRounds ?? Number.NaN,
    // A stall shorter than the 10 ms timeline resolution counts as 10 ms.
    failoverStallEtcdOverReef: round(etcdStallMs / Math.max(failover.reefStallMs ?? Number.NaN, 10), 2)
  }
  Object.assign(metrics, {
    etcd: Object.fromEntries(
      Object.entries(etcd).map(([n, e]) => [
        `n${n}`,
        {
          putPerSec: round(e.put, 0),
          getPerSec: round(e.get, 0),
          putP50Ms: round(e.putP50),
          putP99Ms: round(e.putP99),
          clientCpuCores: e.clientCores
        }
      ])
    ),
    etcdFsync: "disabled (--unsafe-no-fsync): POPUC keeps its state in memory like the paper",
    redis: { setPerSec: round(redisSet.throughputPerSec, 0), getPerSec: round(redisGet.throughputPerSec, 0) },
    failover: { ...failover, etcdLeaderKillStallMs: etcdStallMs },
    failoverLight,
    saturation: saturated,
    stalls,
    roundClose: {
      default: "allHeard: a round closes once every peer not suspected is heard from (timer: the paper's timed rounds)",
      ...timed
    },
    kvTransport: "session (reef.v1.KV/Session, one pipelined stream per client and replica)",
    concurrency: plan.concurrency,
    loadMs: plan.loadMs,
    warmUpMs: plan.warmUpMs
  })

  printTable(
    `POPUC engine, failure-free${quick ? " (quick)" : ""}`,
    [
      "N",
      "idle inst/s",
      "rounds/inst",
      "round ms",
      "round p50",
      "round p99",
      "round max",
      "self-quits",
      "peak RSS MB",
      "idle RSS MB",
      "idle RSS after load MB",
      "after s"
    ],
    engineRows
  )
  printTable(
    "Replicated KV (Reef POPUC), 128 in flight",
    ["N", "mode", "set/s", "set p50", "set p99", "get/s", "get p50", "get p99", "errors"],
    kvRows
  )
  printTable(
    "Peers, same machine, same run",
    ["system", "N", "write/s", "read/s", "write p50", "write p99", "client cores"],
    [
      ...Object.entries(etcd).map(([n, e]) => [
        "etcd (no fsync, Go client)",
        n,
        e.put,
        e.get,
        e.putP50,
        e.putP99,
        e.clientCores
      ]),
      [
        "redis (unreplicated)",
        1,
        redisSet.throughputPerSec,
        redisGet.throughputPerSec,
        redisSet.p50Ms,
        redisSet.p99Ms,
        round(redisSet.clientCpuSeconds / redisSet.seconds)
      ]
    ]
  )
  printTable(
    `Saturation (N = 5, ${plan.saturation} writes in flight)`,
    ["system", "write/s", "p50 ms", "p99 ms", "client cores", "self-quits"],
    [
      [
        "reef colocated",
        saturated.reefSetPerSec ?? "",
        saturated.reefSetP50Ms ?? "",
        saturated.reefSetP99Ms ?? "",
        saturated.reefClientCpuCores ?? "",
        saturated.reefSelfQuits ?? ""
      ],
      [
        "etcd (no fsync, Go client)",
        saturated.etcdPutPerSec ?? "",
        saturated.etcdPutP50Ms ?? "",
        saturated.etcdPutP99Ms ?? "",
        saturated.etcdClientCpuCores ?? "",
        ""
      ]
    ]
  )
  printTable(
    "Failover under load (N = 5)",
    [
      "system",
      "in flight",
      "gap before",
      "gap after",
      "stall ms",
      "stall rounds",
      "before /s",
      "after /s",
      "gone reports"
    ],
    [
      ...[failover, failoverLight].map((f) => [
        "reef: kill 1 replica",
        f.inFlight ?? "",
        f.reefGapBeforeKillMs ?? "",
        f.reefGapAfterKillMs ?? "",
        f.reefStallMs ?? "",
        f.reefStallRounds ?? "",
        f.reefSetPerSecBefore ?? "",
        f.reefSetPerSecAfter ?? "",
        f.reefPeersReportedGone ?? ""
      ]),
      ["etcd: kill the leader", plan.concurrency, "", "", etcdStallMs, "", "", "", ""]
    ]
  )
  printTable(
    `Round close (N = 5): the paper's timed rounds against rounds closed on all heard`,
    ["rounds", "set/s (128)", "set p50", "1 client p50", "round p50", "self-quits"],
    Object.entries(timed).map(([mode, t]) => [
      mode,
      t.setPerSec,
      t.setP50Ms,
      t.loneSetP50Ms,
      t.roundTimeP50Ms,
      t.selfQuits
    ])
  )
  printTable(
    `Whole-group stalls (N = 3, ${plan.concurrency} in flight): every replica paused ${stalls.pauseMs} ms every ${stalls.everyMs} ms`,
    ["pauses", "set/s", "errors", "self-quits"],
    [[stalls.pauses, stalls.setPerSec, stalls.errors, stalls.selfQuits]]
  )
  printTable("Ratios", ["ratio", "value"], Object.entries(ratios))

  const path = writeResult({ suite: "popuc", quick, machine: machine(), metrics: metrics as never, ratios })
  const svg = lineChart({
    title: `Set throughput vs group size (${plan.concurrency} in flight)`,
    xLabel: "replicas (N)",
    yLabel: "writes per second",
    logY: true,
    series: [
      ...[...throughputByMode].map(([mode, points]) => ({ name: `reef ${mode}`, points })),
      { name: "etcd (no fsync)", points: Object.entries(etcd).map(([n, e]) => [Number(n), e.put] as const) },
      { name: "redis (1 node)", points: plan.ns.map((n) => [n, redisSet.throughputPerSec] as const), reference: true }
    ]
  })
  writeFileSync(join(resultsDir, "popuc.svg"), svg)
  console.log(`wrote ${path} and ${join(resultsDir, "popuc.svg")}`)
}
