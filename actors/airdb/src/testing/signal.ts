import * as Effect from "effect/Effect"

/** Sends a signal to a server process the test started (SIGSTOP/SIGCONT to freeze and thaw it). */
export const signalProcess = (pid: number, signal: NodeJS.Signals): Effect.Effect<void> =>
  Effect.sync(() => {
    if (pid > 0) process.kill(pid, signal)
  })
