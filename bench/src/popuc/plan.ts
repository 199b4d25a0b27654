/**
 * What the `popuc` suite's scenarios share: the plan (quick or full), colocated write loads, engine stats
 * summed over a group, idle RSS readings.
 */
import type { DeploymentMode } from "@reef/replica"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { type KvLoadOptions, runKvLoad } from "../kv-load.js"
import { engineStates, type Group, largestRssMb } from "../popuc-group.js"
import { round } from "../report.js"

export const MODES: ReadonlyArray<DeploymentMode> = ["colocated", "balanced", "leader"]

export interface Plan {
  readonly ns: ReadonlyArray<number>
  readonly modesFor: (n: number) => ReadonlyArray<DeploymentMode>
  readonly etcdNs: ReadonlyArray<number>
  readonly loadMs: number
  readonly concurrency: number
  /** In flight for the N = 5 saturation comparison with etcd. */
  readonly saturation: number
  /**
   * Unmeasured write load on every fresh cluster, Reef's and etcd's alike, before its first measurement: V8
   * compiles the hot paths of 2N threads (host and engine of every replica) during the first seconds of load,
   * and etcd's Go runtime grows its heaps and connection buffers. Equal on both sides, so a ratio compares two
   * warmed systems.
   */
  readonly warmUpMs: number
  /** Failover: the kill this long into the load, which goes on for `afterMs` more. */
  readonly failover: { readonly killAtMs: number; readonly afterMs: number }
  /** etcd's raft timing tuned to loopback scale, reported beside its defaults in the failover comparison. */
  readonly etcdTunedRaft: { readonly heartbeatMs: number; readonly electionMs: number }
  /**
   * When idle RSS is read (the full run only): `settleMs` after a group starts, once the allocator has
   * returned start-up garbage (JEMALLOC_CONF in @reef/devkit), and after its loads once the largest replica is
   * back within IDLE_RSS_BUDGET_MB, polled for at most `afterLoadMaxMs`: V8's memory reducer runs its
   * compacting GCs well after a load ends, and later still in a replica that served most of it.
   */
  readonly idleRss?: { readonly settleMs: number; readonly afterLoadMaxMs: number }
}

export const planFor = (quick: boolean): Plan =>
  quick
    ? {
        ns: [3, 5, 9],
        modesFor: () => ["colocated"],
        etcdNs: [3, 5, 9],
        loadMs: 1_500,
        concurrency: 128,
        saturation: 1_024,
        warmUpMs: 1_500,
        failover: { killAtMs: 2_000, afterMs: 3_000 },
        etcdTunedRaft: { heartbeatMs: 10, electionMs: 50 }
      }
    : {
        ns: [3, 5, 7, 9],
        modesFor: () => MODES,
        etcdNs: [3, 5, 7, 9],
        loadMs: 5_000,
        concurrency: 128,
        saturation: 1_024,
        warmUpMs: 15_000,
        failover: { killAtMs: 3_000, afterMs: 5_000 },
        etcdTunedRaft: { heartbeatMs: 10, electionMs: 50 },
        idleRss: { settleMs: 10_000, afterLoadMaxMs: 180_000 }
      }

export const sumEngines = (states: Effect.Effect.Success<ReturnType<typeof engineStates>>) => {
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
export const FAILOVER_LIGHT_IN_FLIGHT = 8

/** The guide's budget for an idle actor process. */
export const IDLE_RSS_BUDGET_MB = 120

/** The group's largest RSS after `waitMs` of idling; nothing (no wait) when the plan reads no idle RSS. */
export const idleRssAfter = (group: Group, waitMs: number | undefined) =>
  waitMs === undefined
    ? Effect.succeed(undefined)
    : Effect.map(Effect.sleep(Duration.millis(waitMs)), () => largestRssMb(group, "VmRSS"))

/**
 * After a load: the group's largest RSS once it is within IDLE_RSS_BUDGET_MB (polled every 5 s), and how long
 * that took; at `maxWaitMs`, whatever it is then. Nothing (no wait) when the plan reads no idle RSS.
 */
export const idleRssAfterLoad = (group: Group, maxWaitMs: number | undefined) =>
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

/** Colocated writes, `plan.concurrency` in flight unless `options` says otherwise. */
export const writesFor =
  (plan: Plan) =>
  (addresses: ReadonlyArray<string>, durationMs: number, options: Partial<KvLoadOptions> = {}) =>
    runKvLoad({ addresses, mode: "colocated", op: "set", concurrency: plan.concurrency, durationMs, ...options })

export type EngineSums = ReturnType<typeof sumEngines>

/** The group's engines, summed (sumEngines) now. */
export const engineSums = (group: Group) => Effect.map(engineStates(group), sumEngines)
