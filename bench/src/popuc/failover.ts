/**
 * Failover: colocated load on the four survivors of a group of five, r5 killed three seconds in (enough
 * decided instances before the kill to know the normal gap between completions); at full load on the group
 * the size runs used, and again with few writes in flight on a group of its own.
 */
import * as Effect from "effect/Effect"
import { longestGapMs, rateBetween } from "../kv-load.js"
import { type Group, startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { engineSums, FAILOVER_LIGHT_IN_FLIGHT, type Plan, writesFor } from "./plan.js"

export type Failover = Partial<Record<string, number>>

export const killOneOfFive = (plan: Plan, group: Group, concurrency: number) =>
  Effect.gen(function* () {
    const killAtMs = 3_000
    const durationMs = killAtMs + Math.max(3_000, plan.loadMs)
    const victim = group.children[4]!
    const beforeKill = yield* engineSums(group)
    const roundPeriodMs = beforeKill.roundPeriodMs
    const load = yield* writesFor(plan)(group.addresses, durationMs, {
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
    const survivors = yield* engineSums({ ...group, addresses: group.addresses.slice(0, 4) })
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
    } satisfies Failover
  })

/**
 * The same kill with few writes in flight: completions are then spaced by an instance, not by the saturated
 * machine's gaps, so what the kill itself costs shows.
 */
export const failoverLight = (plan: Plan, natsUrl: string) =>
  Effect.gen(function* () {
    const group = yield* startGroup(natsUrl, 5, "failover-light")
    yield* writesFor(plan)(group.addresses, plan.warmUpMs)
    return yield* killOneOfFive(plan, group, FAILOVER_LIGHT_IN_FLIGHT)
  }).pipe(Effect.scoped)
