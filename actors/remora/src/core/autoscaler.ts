/**
 * The autoscaler's policy (§4.7, Alg. 5's trigger) as a pure state machine: per-worker load reports in,
 * spawn/retire decisions out. No clock: every observation carries the shell's time.
 *
 * - Scale-out: the mean load per active worker stayed above `highLoad` for `sustain` observations in a row
 *   (or the pool is below `min`).
 * - Scale-in: the mean load stayed below `lowLoad` for `sustain` observations and the load the others would
 *   carry without one worker stays below `highLoad` (so a retirement cannot itself trigger a spawn).
 * - Hysteresis: `lowLoad < highLoad`, and a streak restarts whenever the load leaves its band.
 * - Cool-down: no decision within `coolDownMs` of the last one, and none while a spawn is outstanding or a
 *   worker is retiring: one transition at a time, so the next decision sees its effect.
 *
 * The retired worker is the least loaded active one (ties: the highest id, the newest by convention), which is
 * the one whose leases move least.
 */
import type { WorkerId } from "./types.js"

export interface AutoscalerParams {
  /** The pool never shrinks below `min` nor grows above `max` active workers. */
  readonly min: number
  readonly max: number
  /** Mean outstanding work per active worker (µs, the coordinator's load P) above which the pool grows. */
  readonly highLoad: number
  /** ... and below which it shrinks; must be below `highLoad`. */
  readonly lowLoad: number
  /** Observations in a row the load must stay out of the band before a decision. */
  readonly sustain: number
  /** No decision within this long of the previous one (ms). */
  readonly coolDownMs: number
  /** A spawn that brought no new worker within this long (ms) is given up (and may be decided again). */
  readonly spawnTimeoutMs: number
}

export const defaultAutoscalerParams: AutoscalerParams = {
  min: 1,
  max: 4,
  highLoad: 20_000,
  lowLoad: 5_000,
  sustain: 3,
  coolDownMs: 5_000,
  spawnTimeoutMs: 30_000
}

/** A worker as the coordinator sees it: active (gets placements) or retiring (draining, Alg. 5). */
export interface WorkerLoad {
  readonly id: WorkerId
  readonly load: number
  readonly state: "active" | "retiring"
}

export type ScaleReason = "below-min" | "above-max" | "load-high" | "load-low"

export type ScaleDecision =
  | { readonly _tag: "Spawn"; readonly reason: ScaleReason; readonly meanLoad: number; readonly pool: number }
  | {
      readonly _tag: "Retire"
      readonly worker: WorkerId
      readonly reason: ScaleReason
      readonly meanLoad: number
      readonly pool: number
    }

export interface AutoscalerState {
  readonly params: AutoscalerParams
  highStreak: number
  lowStreak: number
  /** When the last decision was made (-Infinity: never). */
  lastDecisionMs: number
  /** A spawn decided and not yet seen as a new worker: the pool size it expects, and when it was decided. */
  spawning: { readonly pool: number; readonly atMs: number } | undefined
  decisions: number
}

export class AutoscalerParamsError extends Error {
  readonly _tag = "AutoscalerParamsError"
}

export const validateAutoscalerParams = (p: AutoscalerParams): AutoscalerParams => {
  const fail = (why: string) => {
    throw new AutoscalerParamsError(
      `autoscaler: ${why} (min=${p.min} max=${p.max} low=${p.lowLoad} high=${p.highLoad})`
    )
  }
  if (!Number.isInteger(p.min) || p.min < 1) fail("min must be an integer >= 1")
  if (!Number.isInteger(p.max) || p.max < p.min) fail("max must be an integer >= min")
  if (!(p.lowLoad >= 0 && p.lowLoad < p.highLoad)) fail("need 0 <= lowLoad < highLoad")
  if (!Number.isInteger(p.sustain) || p.sustain < 1) fail("sustain must be an integer >= 1")
  if (!(p.coolDownMs >= 0) || !(p.spawnTimeoutMs > 0)) fail("coolDownMs >= 0 and spawnTimeoutMs > 0")
  return p
}

export const createAutoscaler = (params: AutoscalerParams): AutoscalerState => ({
  params: validateAutoscalerParams(params),
  highStreak: 0,
  lowStreak: 0,
  lastDecisionMs: -Infinity,
  spawning: undefined,
  decisions: 0
})

/** One observation of the pool at `nowMs`: at most one decision. */
export const observe = (
  s: AutoscalerState,
  nowMs: number,
  workers: ReadonlyArray<WorkerLoad>
): ScaleDecision | undefined => {
  const p = s.params
  const active = workers.filter((w) => w.state === "active")
  const retiring = workers.length - active.length
  const pool = active.length
  const total = active.reduce((sum, w) => sum + w.load, 0)
  const meanLoad = pool === 0 ? 0 : total / pool
  if (s.spawning !== undefined) {
    if (pool >= s.spawning.pool) s.spawning = undefined
    else if (nowMs - s.spawning.atMs >= p.spawnTimeoutMs) s.spawning = undefined
  }
  // Streaks count every observation, also during a cool-down, so a sustained load decides as soon as it ends.
  s.highStreak = meanLoad > p.highLoad ? s.highStreak + 1 : 0
  s.lowStreak = meanLoad < p.lowLoad ? s.lowStreak + 1 : 0
  if (s.spawning !== undefined || retiring > 0) return undefined
  const decide = (d: ScaleDecision): ScaleDecision => {
    s.lastDecisionMs = nowMs
    s.highStreak = 0
    s.lowStreak = 0
    s.decisions++
    if (d._tag === "Spawn") s.spawning = { pool: pool + 1, atMs: nowMs }
    return d
  }
  if (pool < p.min) return decide({ _tag: "Spawn", reason: "below-min", meanLoad, pool })
  if (pool > p.max) return decide({ _tag: "Retire", worker: leastLoaded(active), reason: "above-max", meanLoad, pool })
  if (nowMs - s.lastDecisionMs < p.coolDownMs) return undefined
  if (s.highStreak >= p.sustain && pool < p.max) return decide({ _tag: "Spawn", reason: "load-high", meanLoad, pool })
  if (s.lowStreak >= p.sustain && pool > p.min && total / (pool - 1) < p.highLoad) {
    return decide({ _tag: "Retire", worker: leastLoaded(active), reason: "load-low", meanLoad, pool })
  }
  return undefined
}

const leastLoaded = (workers: ReadonlyArray<WorkerLoad>): WorkerId => {
  let best = workers[0]!
  for (const w of workers) {
    if (w.load < best.load || (w.load === best.load && w.id > best.id)) best = w
  }
  return best.id
}
