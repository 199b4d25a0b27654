/**
 * A `reef run` child of `reef up`: its output is prefixed with its name, it counts as started when it prints
 * its "reef ready:" line, and closing the scope stops it with SIGTERM (then SIGKILL after a grace period).
 *
 * It dies with its parent however the parent ends (even SIGKILL): it inherits the read end of a pipe as fd
 * `PARENT_FD` (announced in `REEF_PARENT_FD`) whose write end only the parent holds, and stops itself when that
 * pipe reaches end of file (`watchParent`, what PR_SET_PDEATHSIG does on Linux, without native code).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Socket } from "node:net"
import { createInterface } from "node:readline"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { allocatorEnv, REEF_NODE_FLAGS, reefArgv } from "./reef-command.js"

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
  /** Called when the child exits after it was ready, unless this scope was stopping it. */
  readonly onExit?: (exit: ChildExit) => void
  /** A command that runs node in place (`ip netns exec <netns>` for a test's host): it must exec, not fork. */
  readonly prefix?: ReadonlyArray<string>
  /** Another build's `reef` entry (e.g. a saved bundle a benchmark compares with), not this checkout's. */
  readonly entry?: string
}

/** How a child ended: its exit code, or the signal that killed it. */
export interface ChildExit {
  readonly pid: number
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** `exit code 1`, `killed by SIGKILL`. */
export const exitText = (exit: { readonly code: number | null; readonly signal: string | null }): string =>
  exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code}`

/** The fd of the parent-death pipe in a child. */
export const PARENT_FD = 3

/**
 * In a child started by `startReefChild`: calls `onParentGone` once the parent process is gone (the pipe on
 * `REEF_PARENT_FD` ends). Does nothing when not started so. Never keeps the process alive.
 */
export const watchParent = (onParentGone: () => void, env = process.env): boolean => {
  const fd = Number(env.REEF_PARENT_FD)
  if (!Number.isInteger(fd) || fd < 3) return false
  let pipe: Socket
  try {
    pipe = new Socket({ fd, readable: true, writable: false })
  } catch {
    return false
  }
  let gone = false
  const once = () => {
    if (gone) return
    gone = true
    onParentGone()
  }
  pipe.on("end", once)
  pipe.on("close", once)
  pipe.on("error", once)
  pipe.resume()
  pipe.unref()
  return true
}

export const READY_PREFIX = "reef ready:"

/** Children this process is stopping: their exit is expected, not reported. */
const stopping = new WeakSet<ChildProcess>()

const stop = (child: ChildProcess, name: string, timeoutMs: number) =>
  Effect.async<void>((resume) => {
    stopping.add(child)
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
      const command = [
        ...(options.prefix ?? []),
        process.execPath,
        ...(options.nodeFlags ?? []),
        ...(options.entry === undefined ? reefArgv(options.args) : [...REEF_NODE_FLAGS, options.entry, ...options.args])
      ]
      const child = spawn(command[0]!, command.slice(1), {
        // fd 3: the parent-death pipe (watchParent); this process never writes to it.
        stdio: ["ignore", "pipe", "pipe", "pipe"],
        env: {
          ...process.env,
          ...allocatorEnv(),
          REEF_EXIT_WITH_PARENT: "1",
          REEF_PARENT_FD: String(PARENT_FD),
          ...options.env
        }
      })
      ;(child.stdio[PARENT_FD] as Socket | null)?.unref()
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
        if (ready) {
          if (!stopping.has(child)) options.onExit?.({ pid: child.pid ?? 0, code, signal })
          return
        }
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
      for (const child of children) {
        stopping.add(child)
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      }
    })
  )
