/**
 * One round of the Reef side of the group-size comparison: per group size, a fresh group, its idle engine
 * rate, `plan.warmUpMs` of unmeasured writes, then Set and Get throughput and latency in each deployment mode,
 * the engine's rounds and round times under that load, peak and idle RSS; at N = 5 also saturation (as many
 * writes in flight as etcd's peak run) and the failover (failover.ts). The etcd side is peers.ts; popuc.ts
 * runs the two in interleaved rounds.
 */
import * as Effect from "effect/Effect"
import { type KvLoadResult, runKvLoad } from "../kv-load.js"
import { largestRssMb, startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { type CostSample, type NatsProbe, reefCostWindow } from "./cost.js"
import { type FailoverRun, killOneOfFive } from "./failover.js"
import { engineSums, idleRssAfter, idleRssAfterLoad, type Plan, writesFor } from "./plan.js"

/** What a load run is reduced to in a round's record. */
export interface LoadFigures {
  readonly perSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
  readonly clientCpuCores: number
}

export const figuresOf = (r: KvLoadResult): LoadFigures => ({
  perSec: round(r.throughputPerSec, 0),
  p50Ms: round(r.p50Ms),
  p99Ms: round(r.p99Ms),
  errors: r.errors,
  clientCpuCores: round(r.clientCpuSeconds / r.seconds)
})

export interface ReefSize {
  readonly n: number
  readonly modes: Record<string, { readonly set: LoadFigures; readonly get: LoadFigures }>
  readonly engine: Record<string, number | undefined>
  /** CPU, bytes and messages per committed write over the colocated Set window (cost.ts). */
  readonly cost: CostSample
  readonly saturated?: LoadFigures & { readonly selfQuits: number }
  readonly failover?: FailoverRun
}

/** The Reef side of one round: every group size in turn (`idleRss` only in the first round). */
export const reefSizesRound = (plan: Plan, natsUrl: string, nats: NatsProbe, roundIndex: number) =>
  Effect.gen(function* () {
    const writes = writesFor(plan)
    const sizes: Array<ReefSize> = []
    for (const n of plan.ns) {
      const size = yield* Effect.gen(function* () {
        const groupName = `g${n}-r${roundIndex + 1}`
        const group = yield* startGroup(natsUrl, n, groupName)
        const costWindow = reefCostWindow(group, groupName, nats)
        // Idle engine rate: instances decided over one second without load.
        const idle0 = yield* engineSums(group)
        yield* Effect.sleep("1 second")
        const idle1 = yield* engineSums(group)
        const idleRssMb = roundIndex === 0 ? yield* idleRssAfter(group, plan.idleRss?.settleMs) : undefined
        yield* writes(group.addresses, plan.warmUpMs)
        const before = yield* engineSums(group)
        const busySince = performance.now()
        const modes: ReefSize["modes"] = {}
        let cost: CostSample | undefined
        for (const mode of plan.modesFor(n)) {
          const load = (op: "set" | "get") =>
            runKvLoad({ addresses: group.addresses, mode, op, concurrency: plan.concurrency, durationMs: plan.loadMs })
          const costBefore = yield* costWindow.read()
          const sets = yield* load("set")
          if (mode === "colocated") cost = costWindow.sample(costBefore, yield* costWindow.read(), sets)
          const set = figuresOf(sets)
          const get = figuresOf(yield* load("get"))
          modes[mode] = { set, get }
        }
        const after = yield* engineSums(group)
        const busyInstances = after.instances - before.instances
        const busySeconds = (performance.now() - busySince) / 1000
        const peakRssMb = largestRssMb(group, "VmHWM")
        // The budget is for an idle actor process, and one that has served a load is idle again too.
        const idleAfterLoad =
          roundIndex === 0 ? yield* idleRssAfterLoad(group, plan.idleRss?.afterLoadMaxMs) : undefined
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
        if (cost === undefined) throw new Error("the plan has no colocated Set run to measure cost over")
        if (n !== 5) return { n, modes, engine, cost } satisfies ReefSize
        // Saturation: as many writes in flight as etcd's peak run (engine stats around it, so its self-quits
        // are told apart from the failure-free runs above).
        const beforeSaturation = yield* engineSums(group)
        const load = yield* writes(group.addresses, plan.loadMs, { concurrency: plan.saturation })
        const afterSaturation = yield* engineSums(group)
        const saturated = { ...figuresOf(load), selfQuits: afterSaturation.selfQuits - beforeSaturation.selfQuits }
        const failover = yield* killOneOfFive(plan, group, plan.concurrency)
        return { n, modes, engine, cost, saturated, failover } satisfies ReefSize
      }).pipe(Effect.scoped)
      sizes.push(size)
    }
    return sizes
  })
