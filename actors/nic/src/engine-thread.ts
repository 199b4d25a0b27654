/**
 * Worker thread plumbing: one engine thread (engine-worker.ts) started from source or from built JavaScript,
 * its ready handshake, the commands coalesced per turn of the host's event loop, and its stop. What the thread
 * reports goes to the callbacks; what the commands mean is engine.ts's business.
 */
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { TurnBatcher } from "@reef/kernel"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RoundTimerConfig } from "./core/index.js"
import type { EngineCommand, EngineEvent } from "./engine-loop.js"
import type { EngineWorkerData, HostToWorker, WorkerToHost } from "./engine-worker.js"

export class EngineError extends Data.TaggedError("EngineError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

export interface EngineThread {
  readonly roundTimer: RoundTimerConfig
  readonly threadId: number | undefined
  /** Queues a command; what one turn of the host's event loop queued is posted at once. */
  readonly send: (command: EngineCommand) => void
}

export interface EngineThreadCallbacks {
  readonly onEvents: (events: ReadonlyArray<EngineEvent>) => void
  readonly onLog: (level: "info" | "warn", message: string) => void
  /** The thread threw after it was ready. */
  readonly onDied: (reason: string) => void
  /** The thread ended after it was ready. */
  readonly onExited: () => void
}

/** How long a stopping thread has to end by itself before it is terminated. */
const STOP_GRACE_MS = 2_000

const workerFor = (data: EngineWorkerData): Worker => {
  // From source (tsx) the worker must register the TypeScript loader itself; from dist it is plain JS.
  if (import.meta.url.endsWith(".ts")) {
    const entry = new URL("./engine-worker.ts", import.meta.url).href
    // Resolved here: the worker's eval code resolves bare names from the process's working directory, which
    // may be outside the repository (`reef up` started elsewhere). require gives tsx's CommonJS build; the
    // ES module one sits next to it.
    const api = pathToFileURL(
      createRequire(import.meta.url)
        .resolve("tsx/esm/api")
        .replace(/\.cjs$/, ".mjs")
    ).href
    return new Worker(
      `import { register } from ${JSON.stringify(api)}; register(); await import(${JSON.stringify(entry)})`,
      {
        eval: true,
        workerData: data
      }
    )
  }
  return new Worker(new URL("./engine-worker.js", import.meta.url), { workerData: data })
}

/**
 * Starts engine thread `index` and waits for it to be ready (its peers found, its round timer agreed); the
 * scope's end stops it. Commands are coalesced per turn: a gRPC burst proposes many values in one turn of
 * the event loop, and a postMessage each (plus the structured clone) costs more than the engine's step for it.
 */
export const startEngineThread = (
  index: number,
  data: EngineWorkerData,
  callbacks: EngineThreadCallbacks
): Effect.Effect<EngineThread, EngineError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<
      { readonly worker: Worker; readonly commands: TurnBatcher<EngineCommand> } & EngineThread,
      EngineError
    >((resume) => {
      const worker = workerFor(data)
      let ready = false
      worker.on("message", (message: WorkerToHost) => {
        if (message._tag === "Ready" && !ready) {
          ready = true
          const commands = new TurnBatcher<EngineCommand>({
            flush: (batch) => worker.postMessage({ _tag: "Commands", commands: batch } satisfies HostToWorker)
          })
          resume(
            Effect.succeed({
              worker,
              commands,
              roundTimer: message.roundTimer,
              threadId: message.threadId,
              send: (command: EngineCommand) => commands.add(command)
            })
          )
        } else if (message._tag === "Events") callbacks.onEvents(message.events)
        else if (message._tag === "Log") callbacks.onLog(message.level, message.message)
      })
      worker.on("error", (error) => {
        if (!ready)
          resume(Effect.fail(new EngineError({ reason: `engine ${index} failed to start: ${error.message}` })))
        else callbacks.onDied(`engine thread died: ${error.message}`)
      })
      worker.on("exit", (code) => {
        if (!ready) resume(Effect.fail(new EngineError({ reason: `engine ${index} exited (${code}) before ready` })))
        else callbacks.onExited()
      })
      // Interrupted before Ready (a stop while the engine still waits for its peers): no Stop handler
      // runs in the thread yet, so end it outright.
      return Effect.sync(() => void worker.terminate())
    }).pipe(
      // acquireRelease's acquire is uninterruptible; waiting for peers that may never come must not be.
      Effect.interruptible
    ),
    ({ worker, commands }) =>
      Effect.async<void>((resume) => {
        const timer = setTimeout(() => void worker.terminate(), STOP_GRACE_MS)
        worker.once("exit", () => {
          clearTimeout(timer)
          resume(Effect.void)
        })
        // What is queued goes first, then the thread is asked to stop.
        commands.flush()
        worker.postMessage({ _tag: "Stop" } satisfies HostToWorker)
      })
  )
