/**
 * Whole-group stalls: N = 3 under load while every replica process is paused (SIGSTOP) again and again, the
 * way a shared machine or a VM stalls a whole group at once. A replica that blamed its peers for a stall they
 * shared would self-quit (see the engine loop's stall grace, @reef/nic engine-timers.ts).
 */
import * as Effect from "effect/Effect"
import { startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { engineSums, type Plan, writesFor } from "./plan.js"

export const PAUSE_MS = 60
export const PAUSE_EVERY_MS = 400

export const stallWholeGroup = (plan: Plan, natsUrl: string) =>
  Effect.gen(function* () {
    const writes = writesFor(plan)
    const group = yield* startGroup(natsUrl, 3, "stalls")
    yield* writes(group.addresses, plan.warmUpMs)
    const before = yield* engineSums(group)
    let pauses = 0
    const pauseAll = () => {
      pauses++
      for (const child of group.children) if (child.pid !== undefined) process.kill(child.pid, "SIGSTOP")
      setTimeout(() => {
        for (const child of group.children) if (child.pid !== undefined) process.kill(child.pid, "SIGCONT")
      }, PAUSE_MS)
    }
    const load = yield* Effect.acquireUseRelease(
      Effect.sync(() => setInterval(pauseAll, PAUSE_EVERY_MS)),
      () => writes(group.addresses, 2 * plan.loadMs),
      (timer) => Effect.sync(() => clearInterval(timer))
    )
    // The last pause must be over before the engines are asked for their state.
    yield* Effect.sleep(`${2 * PAUSE_MS} millis`)
    const after = yield* engineSums(group)
    return {
      n: 3,
      pauseMs: PAUSE_MS,
      everyMs: PAUSE_EVERY_MS,
      pauses,
      setPerSec: round(load.throughputPerSec, 0),
      errors: load.errors,
      selfQuits: after.selfQuits - before.selfQuits
    }
  }).pipe(Effect.scoped)
