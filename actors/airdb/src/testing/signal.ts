import { readdirSync, readFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

/** Every thread of `pid` is stopped ("T" in /proc): a SIGSTOP is delivered to threads asynchronously. */
const allThreadsStopped = (pid: number): boolean => {
  try {
    return readdirSync(`/proc/${pid}/task`).every((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")
      return /^[tT]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3))
    })
  } catch {
    return true
  }
}

/**
 * Sends a signal to a server process the test started: SIGSTOP freezes it (and waits until every thread
 * is stopped, so a call made next cannot be answered), SIGCONT thaws it.
 */
export const signalProcess = (pid: number, signal: NodeJS.Signals): Effect.Effect<void> =>
  Effect.sync(() => {
    if (pid > 0) process.kill(pid, signal)
  }).pipe(
    Effect.zipRight(
      signal === "SIGSTOP"
        ? Effect.suspend(() => (allThreadsStopped(pid) ? Effect.void : Effect.fail("running"))).pipe(
            Effect.retry(Schedule.spaced("5 millis").pipe(Schedule.upTo("2 seconds"))),
            Effect.ignore
          )
        : Effect.void
    )
  )
