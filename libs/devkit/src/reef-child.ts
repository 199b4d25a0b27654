/**
 * A `reef run` child of `reef up`: its output is prefixed with its name, it counts as started when it prints
 * its "reef ready:" line, and closing the scope stops it with SIGTERM (then SIGKILL after a grace period).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { allocatorEnv, reefArgv } from "./reef-command.js"

export class ChildStartError extends Data.TaggedError("ChildStartError")<{
  readonly name: string
  readonly reason: string
}> {
  override get message() {
    return `${this.name} did not start: ${this.reason}`
  }
}

export interface ChildOptions {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  /** Node flags before the entry point (e.g. `--cpu-prof`, which NODE_OPTIONS does not allow). */
  readonly nodeFlags?: ReadonlyArray<string>
  readonly startTimeoutMs?: number
  readonly stopTimeoutMs?: number
  /** Called for each output line (default: printed with a `[name]` prefix). */
  readonly onLine?: (line: string) => void
}

export const READY_PREFIX = "reef ready:"

const stop = (child: ChildProcess, name: string, timeoutMs: number) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const timer = setTimeout(() => {
      console.error(`[${name}] still running ${timeoutMs} ms after SIGTERM: killing it`)
      child.kill("SIGKILL")
    }, timeoutMs)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

export const startReefChild = (options: ChildOptions) =>
  Effect.acquireRelease(
    Effect.async<ChildProcess, ChildStartError>((resume) => {
      const child = spawn(process.execPath, [...(options.nodeFlags ?? []), ...reefArgv(options.args)], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, ...allocatorEnv(), REEF_EXIT_WITH_PARENT: "1", ...options.env }
      })
      const print = options.onLine ?? ((line: string) => console.log(`[${options.name}] ${line}`))
      let ready = false
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        resume(Effect.fail(new ChildStartError({ name: options.name, reason: "no ready line in time" })))
      }, options.startTimeoutMs ?? 30_000)
      createInterface({ input: child.stdout! }).on("line", (line) => {
        print(line)
        if (!ready && line.startsWith(READY_PREFIX)) {
          ready = true
          clearTimeout(timer)
          resume(Effect.succeed(child))
        }
      })
      createInterface({ input: child.stderr! }).on("line", print)
      child.once("exit", (code, signal) => {
        if (ready) return
        clearTimeout(timer)
        resume(Effect.fail(new ChildStartError({ name: options.name, reason: `exited (${code ?? signal})` })))
      })
    }),
    (child) => stop(child, options.name, options.stopTimeoutMs ?? 10_000)
  )

/**
 * Adds a finalizer that sends SIGTERM to every child at once (each child's own finalizer then waits for its
 * exit). Stopped one by one, the last replicas of a group would watch it lose its majority and self-quit.
 */
export const stopTogetherOnClose = (children: ReadonlyArray<ChildProcess>) =>
  Effect.addFinalizer(() =>
    Effect.sync(() => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    })
  )
