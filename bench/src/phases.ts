/**
 * Where a long benchmark is (issue 13, "long phases show a progress line on a TTY and plain lines
 * otherwise"): a plain line as each phase starts, so a log or CI output shows it too, and on a terminal a
 * status line under it with the phase's elapsed time, redrawn every second.
 */
import { makeOutput, type Output } from "@reef/devkit/output"
import * as Effect from "effect/Effect"

export interface Phases {
  /** Runs `effect` as the next phase, announced by `name`. */
  readonly phase: <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Removes the status line (the suite prints its tables next). */
  readonly done: () => void
}

export const makePhases = (suite: string, total: number, out: Output = makeOutput()): Phases => {
  let index = 0
  let ticker: ReturnType<typeof setInterval> | undefined
  const stop = () => {
    if (ticker !== undefined) clearInterval(ticker)
    ticker = undefined
    out.status("")
  }
  const start = (name: string) => {
    stop()
    index++
    const label = `${suite} [${index}/${total}] ${name}`
    out.line(label)
    if (!out.live) return
    const t0 = performance.now()
    const tick = () => out.status(`${label}: ${((performance.now() - t0) / 1000).toFixed(0)} s`)
    tick()
    ticker = setInterval(tick, 1000)
    ticker.unref()
  }
  return {
    phase: (name, effect) => Effect.sync(() => start(name)).pipe(Effect.zipRight(effect)),
    done: stop
  }
}
