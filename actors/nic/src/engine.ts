/**
 * The host side of the NIC, its engine commands: starts K engine threads (K = 1, or more for the pipelined
 * mode; engine-thread.ts), forwards host commands to them and matches their answers, and merges their
 * decisions through the aggregator into one ordered stream of applied batches for the replica. Engines run
 * in worker threads so consensus timing is isolated from the host (host-priority.ts).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type AggregatorState, aggregate, createAggregator, type EngineDecision } from "./aggregator.js"
import type { Incarnation, ProcessId, RoundTimerConfig } from "./core/index.js"
import type { DecidedEvent, EngineCommand, EngineEvent, EngineStats, RoundValues } from "./engine-loop.js"
import { EngineError, startEngineThread } from "./engine-thread.js"
import type { EngineWorkerData } from "./engine-worker.js"
import { defaultHostNice, type RoundClose, yieldHostToEngines } from "./host-priority.js"

export { EngineError } from "./engine-thread.js"
export type { RoundClose } from "./host-priority.js"

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
  /** How later rounds carry their values (engine-loop.ts `RoundValues`): `refs` (default) or `full`. */
  readonly roundValues?: RoundValues
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

/** What an engine's self-quit says (engine-loop.ts, the Crashed event). */
export type EngineCrash = Omit<Extract<EngineEvent, { readonly _tag: "Crashed" }>, "_tag">

export interface EngineHandlers {
  /** Called in merged order; every replica sees the same sequence. */
  readonly onApplied: (batch: AppliedBatch) => void
  /** The engine self-quit (excluded or behind): the host must rejoin. */
  readonly onCrashed: (engine: number, crash: EngineCrash) => void
  /** The engine opened round 1 of a higher attempt of `instance` (core/popuc-multi.ts, "Attempts"). */
  readonly onAttempt?: (engine: number, instance: number, attempt: number) => void
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

/**
 * Floor on a calibrated ΔI. Calibration probes an idle group, but under load on a shared machine every
 * replica's threads compete with the others, and larger groups see longer scheduling delays (the interaction
 * tails are in bench/results/popuc.json), so the floor grows with N.
 */
export const defaultMinInteractionMs = (members: number) => Math.max(6, 3 * members)

interface PendingRequest {
  readonly engine: number
  readonly resolve: (event: EngineEvent) => void
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
          return handlers.onCrashed(engine, event)
        case "Attempt":
          return handlers.onAttempt?.(engine, event.instance, event.attempt)
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

    const threadData = (index: number): EngineWorkerData => ({
      natsUrl: options.natsUrl,
      cluster: options.cluster,
      config: {
        group: count === 1 ? options.group : `${options.group}-e${index}`,
        self: options.self,
        incarnation: options.incarnation,
        members: options.members,
        maxBatchBytes: options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES,
        ...(options.maxPending === undefined ? {} : { maxPending: options.maxPending }),
        ...(options.roundValues === undefined ? {} : { roundValues: options.roundValues })
      },
      ...(options.interactionMs === undefined ? {} : { interactionMs: options.interactionMs }),
      minInteractionMs: options.minInteractionMs ?? defaultMinInteractionMs(options.members.length),
      ...(options.instanceGapMs === undefined ? {} : { instanceGapMs: options.instanceGapMs }),
      closeOnAllHeard: roundClose === "allHeard",
      calibrationProbes: options.calibrationProbes ?? 200,
      safetyFactor: options.safetyFactor ?? 2
    })
    const start = (index: number) =>
      startEngineThread(index, threadData(index), {
        onEvents: (events) => {
          for (const event of events) onEvent(index, event)
        },
        onLog: (level, message) => handlers.onLog?.(level, message),
        onDied: (reason) => handlers.onCrashed(index, { instance: 0, attempt: 0, entered: false, reason }),
        onExited: () => onExited(index)
      })

    const running = yield* Effect.forEach(
      Array.from({ length: count }, (_, i) => i),
      start,
      {
        concurrency: "unbounded"
      }
    )

    const priorityProblem = yieldHostToEngines(
      options.hostNice ?? defaultHostNice(roundClose),
      running.map((engine) => engine.threadId)
    )
    if (priorityProblem !== undefined) handlers.onLog?.("warn", priorityProblem)

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
