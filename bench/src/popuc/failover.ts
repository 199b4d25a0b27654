/**
 * Failover, measured the same way on both sides: load from clients on every member, the killed one included
 * (a client whose request fails moves on to the next member, as etcd's clientv3 balancer does), one member
 * killed (kill -9) `plan.failover.killAtMs` into the load; the stall is the longest interval between
 * successive completed writes, over all clients, among those ending after the kill (`gapsAround`, etcdload's
 * `-gap-from`). Reef: one replica of five (POPUC has no leader). etcd: the leader of five, with its default raft
 * timing and with timing tuned to loopback scale (`plan.etcdTunedRaft`), reported side by side.
 */
import * as Effect from "effect/Effect"
import { gapsAround, rateBetween } from "../kv-load.js"
import type { EtcdCluster } from "../peers/index.js"
import { runEtcdLoad } from "../peers/index.js"
import type { Group } from "../popuc-group.js"
import { round } from "../report.js"
import { engineSums, type Plan, writesFor } from "./plan.js"

export interface FailoverRun {
  readonly inFlight: number
  /** The longest gap between completions that ends after the kill (ms). */
  readonly stallMs: number
  /** The longest gap before the kill, the same run's normal (ms). */
  readonly gapBeforeKillMs: number
  readonly errors: number
  readonly perSecBefore?: number
  readonly perSecAfter?: number
  /** Reef: survivors that found the victim's connection gone (engine-loop.ts) rather than waiting out a timer. */
  readonly peersReportedGone?: number
  readonly selfQuits?: number
}

export const killOneOfFive = (plan: Plan, group: Group, concurrency: number) =>
  Effect.gen(function* () {
    const { killAtMs, afterMs } = plan.failover
    const durationMs = killAtMs + afterMs
    const victim = group.children[4]!
    const before = yield* engineSums(group)
    const load = yield* writesFor(plan)(group.addresses, durationMs, {
      concurrency,
      failover: true,
      during: { afterMs: killAtMs, action: async () => void victim.kill("SIGKILL") }
    })
    const gaps = gapsAround(load.completionsMs, killAtMs, load.seconds * 1000)
    const survivors = yield* engineSums({ ...group, addresses: group.addresses.slice(0, 4) })
    return {
      inFlight: concurrency,
      stallMs: round(gaps.afterMs, 1),
      gapBeforeKillMs: round(gaps.beforeMs, 1),
      errors: load.errors,
      perSecBefore: round(rateBetween(load.timeline10ms, 0, killAtMs), 0),
      perSecAfter: round(rateBetween(load.timeline10ms, killAtMs + 1_000, durationMs), 0),
      peersReportedGone: survivors.goneReports - before.goneReports,
      selfQuits: survivors.selfQuits - before.selfQuits
    } satisfies FailoverRun
  })

/** The etcd side: clients on every member (the leader included), the leader killed at the same offset. */
export const killEtcdLeader = async (plan: Plan, cluster: EtcdCluster, concurrency: number): Promise<FailoverRun> => {
  const { killAtMs, afterMs } = plan.failover
  const leader = await cluster.leader()
  const timer = setTimeout(() => void cluster.kill(leader.name), killAtMs)
  try {
    const load = await runEtcdLoad(cluster, {
      op: "put",
      concurrency,
      durationMs: killAtMs + afterMs,
      gapFromMs: killAtMs,
      endpoints: cluster.endpoints
    })
    return {
      inFlight: concurrency,
      stallMs: round(load.maxGapFromMs ?? Number.NaN, 1),
      gapBeforeKillMs: round(load.maxGapBeforeMs ?? Number.NaN, 1),
      errors: load.errors
    }
  } finally {
    clearTimeout(timer)
  }
}
