/** The paper's timed rounds next to the default (rounds closed on all heard), N = 5, on the same server. */
import * as Effect from "effect/Effect"
import { startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { engineSums, type Plan, writesFor } from "./plan.js"

export type RoundCloseResults = Record<string, Record<string, number>>

export const compareRoundClose = (plan: Plan, natsUrl: string) =>
  Effect.gen(function* () {
    const writes = writesFor(plan)
    const timed: RoundCloseResults = {}
    for (const roundClose of ["timer", "allHeard"] as const) {
      yield* Effect.gen(function* () {
        const group = yield* startGroup(natsUrl, 5, `rc-${roundClose}`, ["--round-close", roundClose])
        yield* writes(group.addresses, plan.warmUpMs)
        const sets = yield* writes(group.addresses, plan.loadMs)
        const lone = yield* writes(group.addresses, Math.min(plan.loadMs, 3_000), { concurrency: 1 })
        const engines = yield* engineSums(group)
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
    return timed
  })
