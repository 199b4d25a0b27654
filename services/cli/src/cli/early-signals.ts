/**
 * Ctrl-C (or SIGTERM) before the command's program runs ends the process with code 0, as it does once the
 * program runs (cli/program.ts: an interrupted program exits 0 after its scopes close). Without this, a signal
 * during start-up, which on a loaded machine takes seconds, killed the process by the signal instead, so
 * `reef watch` and `reef status --watch` stopped with different codes depending on when Ctrl-C came. Imported
 * first by main.ts; bin/reef.mjs installs the same handler under the same key before it loads anything.
 */
const KEY = Symbol.for("reef.earlySignalHandler")
const registry = globalThis as unknown as Record<symbol, (() => void) | undefined>

if (registry[KEY] === undefined) {
  const handler = () => process.exit(0)
  registry[KEY] = handler
  process.on("SIGINT", handler)
  process.on("SIGTERM", handler)
}

/** Hands signals over to the program (call right after runProgram registered its own handlers). */
export const endEarlySignals = (): void => {
  const handler = registry[KEY]
  if (handler === undefined) return
  process.off("SIGINT", handler)
  process.off("SIGTERM", handler)
}
