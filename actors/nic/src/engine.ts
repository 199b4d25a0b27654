/**
 * The host side of the NIC: starts K engine threads (K = 1, or more for the pipelined mode), forwards host
 * commands to them, and merges their decisions through the aggregator into one ordered stream of applied
 * batches for the replica. Engines run in worker threads so consensus timing is isolated from the host.
 */
import { readdirSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type AggregatorState, aggregate, createAggregator, type EngineDecision } from "./aggregator.js"
import type { Incarnation, ProcessId, RoundTimerConfig } from "./core/index.js"
import type { DecidedEvent, EngineCommand, EngineEvent, EngineStats } from "./engine-loop.js"
import type { EngineWorkerData, HostToWorker, WorkerToHost } from "./engine-worker.js"

export class EngineError extends Data.TaggedError("EngineError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

export type RoundClose = "allHeard" | "timer"

export const ROUND_CLOSE_MODES: ReadonlyArray<RoundClose> = ["allHeard", "timer"]

export const DEFAULT_ROUND_CLOSE: RoundClose = "allHeard"

export interface EngineOptions {
  readonly natsUrl: string
  readonly cluster: string
  readonly group: string
  readonly self: ProcessId
  /** This process start (core/types.ts); `newIncarnation()` draws one. */
  readonly incarnation: Incarnation
  readonly members: ReadonlyArray<ProcessId>
  /** Parallel consensus engines (the pipelined NIC); 1 by default. */
  readonly engines?: number
  readonly maxBatchBytes?: number
  readonly maxPending?: number
  /** Fixed ΔI; calibrated at bootstrap when absent. */
  readonly interactionMs?: number
  readonly minInteractionMs?: number
  /**
   * Gap between instances (ms), 0 for back-to-back instances. When absent: 3ΔI with rounds closed on all
   * heard (an idle gap), ΔI/3 with timed rounds (see engine-worker.ts).
   */
  readonly instanceGapMs?: number
  /**
   * When a round closes: `allHeard` (default) as soon as every awaited peer was heard from, its timer then
   * only bounding the wait for a silent one; `timer` at its timer, the paper's timed rounds. See round-timer.ts.
   */
  readonly roundClose?: RoundClose
  readonly calibrationProbes?: number
  readonly safetyFactor?: number
  /**
   * Nice value for the host thread once the engines run (0 leaves it alone): `defaultHostNice`. See
   * `yieldHostToEngines`.
   */
  readonly hostNice?: number
}

/** A value this process proposed on engine `engine`: with the host's incarnation, its identity. */
export interface ProposalRef {
  readonly engine: number
  readonly seq: number
}

/** One decided instance of one engine, in the merged order, with what it delivered. */
export type AppliedBatch = Omit<DecidedEvent, "_tag"> & { readonly engine: number }

export interface EngineHandlers {
  /** Called in merged order; every replica sees the same sequence. */
  readonly onApplied: (batch: AppliedBatch) => void
  /** The engine self-quit (excluded or behind): the host must rejoin. */
  readonly onCrashed: (engine: number, instance: number, reason: string) => void
  /** After a self-quit, the engine caught up as a learner and takes part again (no state transfer needed). */
  readonly onRejoined?: (engine: number, instance: number) => void
  readonly onDropped?: (engine: number, reason: string) => void
  readonly onLog?: (level: "info" | "warn", message: string) => void
}

export interface NicEngine {
  readonly roundTimer: RoundTimerConfig
  readonly engines: number
  /**
   * Queues a value on one engine (round-robin). `onRejected` is called if the engine refuses it (pending
   * buffer full, engine stopped); otherwise the value shows up in a later `onApplied`. A callback, not an
   * Effect: this is once per client write, and the caller already waits on its own Effect for the outcome.
   */
  readonly propose: (payload: Uint8Array, onRejected: (reason: string) => void) => void
  /**
   * Proposes a new member list on every engine. Succeeds once every engine queued it, with each proposal's
   * identity (match the decided membership values by it); fails when an engine refuses it.
   */
  readonly proposeMembership: (
    members: ReadonlyArray<ProcessId>
  ) => Effect.Effect<ReadonlyArray<ProposalRef>, EngineError>
  readonly stats: Effect.Effect<ReadonlyArray<EngineStats>, EngineError>
  /** Starts the first instance with the group (Alg. 3 sync-start): a group's bootstrap. */
  readonly syncStart: Effect.Effect<void>
  /**
   * (Re)joins a running group at `startInstance` (single-engine groups): `decisions` are every decision from
   * the engine's next undelivered instance up to `startInstance - 1`, transferred from a peer.
   */
  readonly join: (
    join: Omit<Extract<EngineCommand, { readonly _tag: "Join" }>, "_tag">
  ) => Effect.Effect<void, EngineError>
}

export const DEFAULT_MAX_BATCH_BYTES = 256 * 1024

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
 * Floor on a calibrated ΔI. Calibration probes an idle group, but under load on a shared 2-core machine every
 * replica's threads compete with the others, and larger groups see longer scheduling delays (measured under
 * load here: interaction p99 ≈ 8 ms at N = 3, 13 ms at N = 5, 25 ms at N = 9), so the floor grows with N.
 */
export const defaultMinInteractionMs = (members: number) => Math.max(6, 3 * members)

/**
 * Timed rounds: 5, so the host's client work waits for the engines' timers (see `yieldHostToEngines`).
 * Rounds closed on all heard: 0. There a round lasts as long as its messages take and the host is the other
 * half of every write's path, so a host held back by nice 5 made writes ~25% slower at 128 in flight
 * (measured at N = 5, 1,200-1,500/s against 1,600-1,740/s), with no self-quit at either value.
 */
export const defaultHostNice = (roundClose: RoundClose): number => (roundClose === "timer" ? 5 : 0)

/**
 * The engines are the timing-critical part (the paper's FPGA): a round that closes late turns a correct peer
 * into a suspect, and enough of those make a replica self-quit. On a loaded machine the host's client work
 * must therefore wait for the engines' timers, not the reverse. Linux nice values are per thread, so every
 * thread of this process but the engines' gets `nice`: the host thread, and V8's and libuv's helper threads
 * (background compilation of the host's code used to compete with the engines at the start of a load burst).
 * Threads started later inherit the nice value of the thread that starts them. Raising a nice value needs no
 * privilege; a thread already nicer than `nice` is left alone. Off Linux only the calling thread is changed.
 */
const yieldHostToEngines = (
  nice: number,
  engineThreads: ReadonlyArray<number | undefined>,
  handlers: EngineHandlers
) => {
  if (nice <= 0) return
  const lower = (tid: number) => {
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice)
  }
  try {
    lower(0)
    if (engineThreads.some((tid) => tid === undefined)) return
    for (const entry of readdirSync("/proc/self/task")) {
      const tid = Number(entry)
      if (!engineThreads.includes(tid)) {
        try {
          lower(tid)
        } catch {
          // The thread ended meanwhile.
        }
      }
    }
  } catch (error) {
    handlers.onLog?.("warn", `could not lower the host's priority below the engines': ${String(error)}`)
  }
}

interface PendingRequest {
  readonly engine: number
  readonly resolve: (event: EngineEvent) => void
}

interface RunningEngine {
  readonly worker: Worker
  readonly roundTimer: RoundTimerConfig
  readonly threadId: number | undefined
  /** Queues a command; what one turn of the host's event loop queued is posted at once (setImmediate). */
  readonly send: (command: EngineCommand) => void
  /** Posts what is queued, then asks the thread to stop. */
  readonly stop: () => void
}

/**
 * Coalesces commands to an engine thread: a gRPC burst proposes many values in one turn of the event loop,
 * and a postMessage each (plus the structured clone) costs more than the engine's step for it.
 */
const commandSender = (worker: Worker) => {
  let queued: Array<EngineCommand> = []
  const flush = () => {
    if (queued.length === 0) return
    const commands = queued
    queued = []
    worker.postMessage({ _tag: "Commands", commands } satisfies HostToWorker)
  }
  return {
    send: (command: EngineCommand) => {
      if (queued.length === 0) setImmediate(flush)
      queued.push(command)
    },
    stop: () => {
      flush()
      worker.postMessage({ _tag: "Stop" } satisfies HostToWorker)
    }
  }
}

export const startEngine = (
  options: EngineOptions,
  handlers: EngineHandlers
): Effect.Effect<NicEngine, EngineError, Scope.Scope> =>
  Effect.gen(function* () {
    const count = options.engines ?? 1
    const roundClose = options.roundClose ?? DEFAULT_ROUND_CLOSE
    let aggregator: AggregatorState<AppliedBatch> = createAggregator(count)
    const pending = new Map<number, PendingRequest>()
    const statsWaiters = new Map<number, Array<(s: EngineStats | EngineError) => void>>()
    /** Engines whose thread has exited: what is asked of them fails at once instead of waiting forever. */
    const exited = new Set<number>()
    const stoppedReason = (index: number) => `engine ${index} has stopped`
    const onExited = (index: number) => {
      exited.add(index)
      const stopped = new EngineError({ reason: stoppedReason(index) })
      for (const w of statsWaiters.get(index) ?? []) w(stopped)
      statsWaiters.delete(index)
      for (const [requestId, request] of pending) {
        if (request.engine !== index) continue
        pending.delete(requestId)
        request.resolve({ _tag: "Rejected", requestId, reason: stopped.reason })
      }
    }
    let nextRequest = 0
    let nextEngine = 0

    const onEvent = (engine: number, event: EngineEvent) => {
      switch (event._tag) {
        case "Queued":
        case "Rejected": {
          const request = pending.get(event.requestId)
          pending.delete(event.requestId)
          request?.resolve(event)
          return
        }
        case "Decided": {
          const decision: EngineDecision<AppliedBatch> = {
            engine,
            instance: event.instance,
            values: [{ engine, ...event }]
          }
          const result = aggregate(aggregator, decision)
          aggregator = result.state
          for (const ordered of result.ordered) for (const batch of ordered.values) handlers.onApplied(batch)
          return
        }
        case "Crashed":
          return handlers.onCrashed(engine, event.instance, event.reason)
        case "Left":
          return handlers.onLog?.("info", `engine ${engine} left the group at instance ${event.instance}`)
        case "Rejoined":
          return handlers.onRejoined?.(engine, event.instance)
        case "Dropped":
          return handlers.onDropped?.(engine, event.reason)
        case "Stats": {
          const waiters = statsWaiters.get(engine) ?? []
          statsWaiters.delete(engine)
          for (const w of waiters) w(event.stats)
          return
        }
      }
    }

    const start = (index: number) =>
      Effect.acquireRelease(
        Effect.async<RunningEngine, EngineError>((resume) => {
          const data: EngineWorkerData = {
            natsUrl: options.natsUrl,
            cluster: options.cluster,
            config: {
              group: count === 1 ? options.group : `${options.group}-e${index}`,
              self: options.self,
              incarnation: options.incarnation,
              members: options.members,
              maxBatchBytes: options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES,
              ...(options.maxPending === undefined ? {} : { maxPending: options.maxPending })
            },
            ...(options.interactionMs === undefined ? {} : { interactionMs: options.interactionMs }),
            minInteractionMs: options.minInteractionMs ?? defaultMinInteractionMs(options.members.length),
            ...(options.instanceGapMs === undefined ? {} : { instanceGapMs: options.instanceGapMs }),
            closeOnAllHeard: roundClose === "allHeard",
            calibrationProbes: options.calibrationProbes ?? 200,
            safetyFactor: options.safetyFactor ?? 2
          }
          const worker = workerFor(data)
          let ready = false
          worker.on("message", (message: WorkerToHost) => {
            if (message._tag === "Ready" && !ready) {
              ready = true
              resume(
                Effect.succeed({
                  worker,
                  roundTimer: message.roundTimer,
                  threadId: message.threadId,
                  ...commandSender(worker)
                })
              )
            } else if (message._tag === "Events") for (const event of message.events) onEvent(index, event)
            else if (message._tag === "Log") handlers.onLog?.(message.level, message.message)
          })
          worker.on("error", (error) => {
            if (!ready)
              resume(Effect.fail(new EngineError({ reason: `engine ${index} failed to start: ${error.message}` })))
            else handlers.onCrashed(index, 0, `engine thread died: ${error.message}`)
          })
          worker.on("exit", (code) => {
            if (!ready)
              resume(Effect.fail(new EngineError({ reason: `engine ${index} exited (${code}) before ready` })))
            else onExited(index)
          })
          // Interrupted before Ready (a stop while the engine still waits for its peers): no Stop handler
          // runs in the thread yet, so end it outright.
          return Effect.sync(() => void worker.terminate())
        }).pipe(
          // acquireRelease's acquire is uninterruptible; waiting for peers that may never come must not be.
          Effect.interruptible
        ),
        (engine) =>
          Effect.async<void>((resume) => {
            const timer = setTimeout(() => void engine.worker.terminate(), 2_000)
            engine.worker.once("exit", () => {
              clearTimeout(timer)
              resume(Effect.void)
            })
            engine.stop()
          })
      )

    const running = yield* Effect.forEach(
      Array.from({ length: count }, (_, i) => i),
      start,
      {
        concurrency: "unbounded"
      }
    )

    yieldHostToEngines(
      options.hostNice ?? defaultHostNice(roundClose),
      running.map((engine) => engine.threadId),
      handlers
    )

    /** Sends a command that the engine answers (Queued or Rejected) to `onReply`. */
    const sendRequest = (
      engine: number,
      build: (requestId: number) => EngineCommand,
      onReply: (event: EngineEvent) => void
    ) => {
      const requestId = nextRequest++
      if (exited.has(engine)) return onReply({ _tag: "Rejected", requestId, reason: stoppedReason(engine) })
      pending.set(requestId, { engine, resolve: onReply })
      running[engine]!.send(build(requestId))
    }
    const request = (engine: number, build: (requestId: number) => EngineCommand) =>
      Effect.async<EngineEvent>((resume) => sendRequest(engine, build, (event) => resume(Effect.succeed(event))))

    return {
      roundTimer: running[0]!.roundTimer,
      engines: count,
      propose: (payload, onRejected) => {
        const engine = nextEngine
        nextEngine = (nextEngine + 1) % count
        sendRequest(
          engine,
          (requestId) => ({ _tag: "Broadcast", requestId, payload }),
          (event) => {
            if (event._tag !== "Queued") onRejected(event._tag === "Rejected" ? event.reason : "unexpected reply")
          }
        )
      },
      proposeMembership: (members) =>
        Effect.forEach(running, (_, engine) =>
          Effect.flatMap(
            request(engine, (requestId) => ({ _tag: "ProposeMembership", requestId, members })),
            (event): Effect.Effect<ProposalRef, EngineError> =>
              event._tag === "Queued"
                ? Effect.succeed({ engine, seq: event.seq })
                : Effect.fail(
                    new EngineError({
                      reason: `engine ${engine} refused the membership change: ${event._tag === "Rejected" ? event.reason : event._tag}`
                    })
                  )
          )
        ),
      syncStart: Effect.sync(() => {
        for (const engine of running) engine.send({ _tag: "SyncStart" })
      }),
      join: (join) =>
        count !== 1
          ? Effect.fail(new EngineError({ reason: "rejoin is supported for single-engine groups" }))
          : Effect.sync(() => {
              // Instances before a snapshot are in the host's state already: the merged order resumes there.
              if (join.snapshot !== undefined && join.snapshot.instance > aggregator.nextInstance) {
                aggregator = createAggregator(count, join.snapshot.instance)
              }
              running[0]!.send({ _tag: "Join", ...join })
            }),
      stats: Effect.forEach(running, (engine, index) =>
        Effect.async<EngineStats, EngineError>((resume) => {
          if (exited.has(index)) return resume(Effect.fail(new EngineError({ reason: stoppedReason(index) })))
          const waiters = statsWaiters.get(index) ?? []
          waiters.push((s) => resume(s instanceof EngineError ? Effect.fail(s) : Effect.succeed(s)))
          statsWaiters.set(index, waiters)
          engine.send({ _tag: "ReportStats" })
        })
      )
    } satisfies NicEngine
  })
