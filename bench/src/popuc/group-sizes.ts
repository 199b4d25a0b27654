/**
 * Per group size: the idle engine rate, Set/Get throughput and latency in each deployment mode, the engine's
 * rounds and round times under that load, peak and idle RSS; at N = 5 also saturation (as many writes in
 * flight as etcd's peak run) and the failover under load (failover.ts).
 */
import * as Effect from "effect/Effect"
import { runKvLoad } from "../kv-load.js"
import { largestRssMb, startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { type Failover, killOneOfFive } from "./failover.js"
import { engineSums, idleRssAfter, idleRssAfterLoad, type Plan, writesFor } from "./plan.js"

export interface GroupSizeResults {
  readonly metrics: Record<string, unknown>
  readonly kvRows: Array<ReadonlyArray<unknown>>
  readonly engineRows: Array<ReadonlyArray<unknown>>
  readonly throughputByMode: Map<string, Array<[number, number]>>
  readonly saturated: Record<string, number>
  readonly failover: Failover
}

export const measureGroupSizes = (plan: Plan, natsUrl: string) =>
  Effect.gen(function* () {
    const writes = writesFor(plan)
    const metrics: Record<string, unknown> = {}
    const kvRows: Array<ReadonlyArray<unknown>> = []
    const engineRows: Array<ReadonlyArray<unknown>> = []
    const throughputByMode = new Map<string, Array<[number, number]>>()
    let saturated: Record<string, number> = {}
    let failover: Failover = {}
    for (const n of plan.ns) {
      yield* Effect.gen(function* () {
        const group = yield* startGroup(natsUrl, n, `g${n}`)
        // Idle engine rate: instances decided over one second without load.
        const idle0 = yield* engineSums(group)
        yield* Effect.sleep("1 second")
        const idle1 = yield* engineSums(group)
        const idleRssMb = yield* idleRssAfter(group, plan.idleRss?.settleMs)
        yield* writes(group.addresses, plan.warmUpMs)
        const before = yield* engineSums(group)
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
        const after = yield* engineSums(group)
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
          const beforeSaturation = yield* engineSums(group)
          const load = yield* writes(group.addresses, plan.loadMs, { concurrency: plan.saturation })
          const afterSaturation = yield* engineSums(group)
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

        if (n === 5) failover = yield* killOneOfFive(plan, group, plan.concurrency)
      }).pipe(Effect.scoped)
    }
    return { metrics, kvRows, engineRows, throughputByMode, saturated, failover } satisfies GroupSizeResults
  })
