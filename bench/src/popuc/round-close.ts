/**
 * The paper's timed rounds next to the default (rounds closed on all heard), N = 5, on the same server: one
 * fresh group per mode and round (popuc.ts interleaves them), each warmed alike, then Set throughput at
 * `plan.concurrency` in flight and one client's write latency.
 */
import * as Effect from "effect/Effect"
import { startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { engineSums, type Plan, writesFor } from "./plan.js"

export interface RoundCloseRun {
  readonly setPerSec: number
  readonly setP50Ms: number
  readonly loneSetP50Ms: number
  readonly loneSetPerSec: number
  readonly roundTimeP50Ms: number
  readonly selfQuits: number
}

export const roundCloseRun = (plan: Plan, natsUrl: string, roundClose: "timer" | "allHeard", roundIndex: number) =>
  Effect.gen(function* () {
    const writes = writesFor(plan)
    const group = yield* startGroup(natsUrl, 5, `rc-${roundClose}-r${roundIndex + 1}`, ["--round-close", roundClose])
    yield* writes(group.addresses, plan.warmUpMs)
    const sets = yield* writes(group.addresses, plan.loadMs)
    const lone = yield* writes(group.addresses, Math.min(plan.loadMs, 3_000), { concurrency: 1 })
    const engines = yield* engineSums(group)
    return {
      setPerSec: round(sets.throughputPerSec, 0),
      setP50Ms: round(sets.p50Ms),
      loneSetP50Ms: round(lone.p50Ms),
      loneSetPerSec: round(lone.throughputPerSec, 0),
      roundTimeP50Ms: round(engines.roundTimeP50Ms, 2),
      selfQuits: engines.selfQuits
    } satisfies RoundCloseRun
  }).pipe(Effect.scoped)
