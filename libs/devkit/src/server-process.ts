/**
 * A server child process owned by a scope (redis-server, Azurite, a peer a benchmark compares against):
 * started on a free loopback port, ready once a line it prints says so, stopped when the scope closes, and
 * killed if this process exits first (so a crashed test or benchmark run leaves nothing behind).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import { freePort } from "@reef/kernel"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

export class ServerProcessError extends Data.TaggedError("ServerProcessError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

export interface ServerProcess {
  readonly port: number
  readonly pid: number
  /** SIGKILL, no goodbye. */
  readonly kill: Effect.Effect<void>
}

/** First existing file among `$envVar` (if given), the given absolute paths and `name` on PATH. */
export const findBinary = (
  name: string,
  envVar: string | undefined,
  paths: ReadonlyArray<string> = []
): string | undefined =>
  [
    envVar === undefined ? undefined : process.env[envVar],
    ...paths,
    ...(process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, name))
  ].find((c): c is string => c !== undefined && c !== "" && existsSync(c))

const owned = new Set<ChildProcess>()
let exitHook = false

/**
 * Kills `child` with SIGKILL if this Node process exits first (an `exit` handler may only do synchronous work,
 * and kill is), so a crashed run leaves no server behind.
 */
export const killOnExit = (child: ChildProcess): ChildProcess => {
  owned.add(child)
  child.once("exit", () => owned.delete(child))
  if (!exitHook) {
    exitHook = true
    process.once("exit", () => {
      for (const c of owned) c.kill("SIGKILL")
    })
  }
  return child
}

const stop = (child: ChildProcess, signal: NodeJS.Signals) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill(signal)
  })

export interface ServerSpec {
  readonly name: string
  readonly command: string
  readonly args: (port: number) => ReadonlyArray<string>
  /** A line of its output that means it accepts connections. */
  readonly ready: RegExp
  readonly startTimeoutMs?: number
  readonly port?: number
  readonly cwd?: string
}

/** Starts the server in the current scope; SIGTERM (then SIGKILL after 2 s) when the scope closes. */
export const startServerProcess = (spec: ServerSpec) =>
  Effect.gen(function* () {
    const port = spec.port ?? (yield* Effect.mapError(freePort, (e) => new ServerProcessError({ reason: e.reason })))
    const timeoutMs = spec.startTimeoutMs ?? 30_000
    const child = yield* Effect.acquireRelease(
      Effect.async<ChildProcess, ServerProcessError>((resume) => {
        const child = spawn(spec.command, [...spec.args(port)], {
          stdio: ["ignore", "pipe", "pipe"],
          ...(spec.cwd === undefined ? {} : { cwd: spec.cwd })
        })
        killOnExit(child)
        let output = ""
        let settled = false
        const settle = (effect: Effect.Effect<ChildProcess, ServerProcessError>) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(effect)
        }
        const timer = setTimeout(() => {
          child.kill("SIGKILL")
          settle(
            Effect.fail(new ServerProcessError({ reason: `${spec.name} not ready after ${timeoutMs} ms:\n${output}` }))
          )
        }, timeoutMs)
        const onData = (chunk: Buffer) => {
          if (settled) return
          output = (output + chunk.toString()).slice(-8192)
          if (spec.ready.test(output)) settle(Effect.succeed(child))
        }
        child.stdout?.on("data", onData)
        child.stderr?.on("data", onData)
        child.on("error", (cause) =>
          settle(Effect.fail(new ServerProcessError({ reason: `cannot start ${spec.command}: ${cause}` })))
        )
        child.on("exit", (code, signal) =>
          settle(Effect.fail(new ServerProcessError({ reason: `${spec.name} exited (${code ?? signal}):\n${output}` })))
        )
      }),
      (child) =>
        // A finalizer is uninterruptible: the wait is made interruptible for the timeout to fire.
        stop(child, "SIGTERM").pipe(
          Effect.interruptible,
          Effect.timeout("2 seconds"),
          Effect.catchAll(() => stop(child, "SIGKILL"))
        )
    )
    // Keep draining its output so a chatty server never blocks on a full pipe.
    child.stdout?.resume()
    child.stderr?.resume()
    const server: ServerProcess = { port, pid: child.pid ?? 0, kill: stop(child, "SIGKILL") }
    return server
  })
