#!/usr/bin/env -S node --max-semi-space-size=2
// `reef` (and `pnpm reef`): runs the newest build that is up to date with the sources in this process (the
// bundle of `pnpm build` before the compiled dist: reefBuild in libs/devkit/src/reef-command.ts), else the
// sources through tsx in a child process. The flag: see REEF_NODE_FLAGS there.
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"

// Ctrl-C while the program loads exits 0, as it does once it runs (src/cli/early-signals.ts, same key).
const earlySignals = Symbol.for("reef.earlySignalHandler")
globalThis[earlySignals] ??= () => process.exit(0)
process.on("SIGINT", globalThis[earlySignals])
process.on("SIGTERM", globalThis[earlySignals])

/** @reef/devkit's compiled reef-command module (no Effect, nothing else of devkit), or undefined before a build. */
const devkit = await import("@reef/devkit/reef-command").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND") return undefined
  throw error
})

/** `reef status` through its fast path when it can answer (src/fast-status.ts); false: the full command runs. */
const fastStatus = async () => {
  const entry = process.argv[2] === "status" ? devkit.reefStatusEntry?.() : undefined
  if (entry === undefined) return false
  return (await import(pathToFileURL(entry).href)).fastStatus(process.argv.slice(2))
}

if (devkit !== undefined && devkit.reefBuild() !== "source") {
  if (!(await fastStatus())) await import(pathToFileURL(devkit.reefEntry()).href)
} else {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
  const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
  const argv = ["--max-semi-space-size=2", "--conditions=@reef/source", "--import", tsx, main, ...process.argv.slice(2)]
  // Here the child decides how a signal ends it.
  process.off("SIGINT", globalThis[earlySignals])
  process.off("SIGTERM", globalThis[earlySignals])
  const child = spawn(process.execPath, argv, { stdio: "inherit" })
  // Ctrl-C reaches the child from the terminal (its process group): a second SIGINT would cut its shutdown short.
  const forward = (signal) => (signal === "SIGINT" ? undefined : child.kill(signal))
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"]
  for (const signal of signals) process.on(signal, forward)
  child.on("exit", (code, signal) => {
    for (const s of signals) process.off(s, forward)
    if (signal !== null) process.kill(process.pid, signal)
    else process.exitCode = code ?? 1
  })
}
