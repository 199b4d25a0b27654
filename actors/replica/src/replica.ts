/**
 * The replica: the host server next to a NIC engine (the paper's scarHW-server). It proposes client
 * commands through its engine, applies decided commands in the merged order, answers the client once its
 * command is applied, and serves reef.v1.KV over gRPC.
 *
 * Linearizability: writes are answered after they are applied, in the total order; reads are ordered
 * through consensus behind a read barrier (read-barrier.ts), so a read sees every write acknowledged
 * before it started. tests/src/popuc-kv.test.ts checks recorded histories with a linearizability checker.
 */
import { createHash } from "node:crypto"
import { framedSession, grpcService, InvalidRequestError, serveGrpc } from "@reef/grpc"
import { defineActor, HandlerError, type Kernel, KernelConfig, Messenger, onAsk, rpc, spawn } from "@reef/kernel"
import {
  type AppliedBatch,
  type DeliveredIndex,
  EngineError,
  type EngineOptions,
  emptyDeliveredIndex,
  isValidMembers,
  type JoinSnapshot,
  markDelivered,
  type NicEngine,
  newIncarnation,
  type ProposalRef,
  type RoundClose,
  roundPeriodMs,
  startEngine,
  valueFromWire,
  valueToWire
} from "@reef/nic"
import { MessagingTracing } from "@reef/observability/tracing"
import {
  CatchUpReply,
  CatchUpRequest,
  type CompareAndSetRequest,
  type CompareAndSetResponse,
  type DeleteRequest,
  type DeleteResponse,
  EngineState,
  ErrorCode,
  type GetRequest,
  type GetResponse,
  KVService,
  KvBatch,
  type KvCommand,
  ReconfigureResponse,
  type SetRequest,
  type SetResponse,
  SnapshotChunkReply,
  SnapshotChunkRequest,
  type StateResponse
} from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import { DecisionLog, type DecisionLogLimits } from "./decision-log.js"
import { recordInstanceSpan } from "./instance-spans.js"
import { kvSessionFrames, makeSessionAnswerer, makeSessionShortcut } from "./kv-session.js"
import { applyCommand, chainValue, emptyKvState, type HashChain, type KvResult, keyValueBytes } from "./kv-state.js"
import { type BarrierState, emptyBarrierState, onBarrierApplied, onBarrierFailed, onRead } from "./read-barrier.js"
import { deliveredFromWire, deliveredToWire, type FrozenSnapshot, freezeSnapshot, installSnapshot } from "./snapshot.js"

export interface ReplicaOptions {
  readonly id: string
  readonly group: string
  readonly members: ReadonlyArray<string>
  readonly natsUrl: string
  /** gRPC port of reef.v1.KV; 0 picks a free one. */
  readonly grpcPort: number
  readonly grpcHost?: string
  readonly engines?: number
  readonly interactionMs?: number
  readonly minInteractionMs?: number
  /** Gap between consensus instances (ms); EngineOptions.instanceGapMs. */
  readonly instanceGapMs?: number
  /** When a consensus round closes (EngineOptions.roundClose). */
  readonly roundClose?: RoundClose
  readonly maxKeyBytes?: number
  readonly maxValueBytes?: number
  /** Bounds of the decision log peers catch up from (beyond them, a peer gets a snapshot). */
  readonly log?: DecisionLogLimits
}

export const DEFAULT_MAX_KEY_BYTES = 1024
export const DEFAULT_MAX_VALUE_BYTES = 64 * 1024

/**
 * Bound on the commands proposed as one value (their keys and values): a round-2 message carries every
 * replica's proposal and must stay well inside NATS's 1 MB payload limit at N = 9.
 */
export const MAX_PROPOSAL_BYTES = 64 * 1024

/** A command's key and value bytes (what MAX_PROPOSAL_BYTES counts), plus a little for its framing. */
const commandBytes = (op: KvCommand["op"]): number =>
  16 + (op === undefined || op.$case === "readBarrier" ? 0 : keyValueBytes(op.value))

/** Replica-to-replica: what a (re)joining replica asks a peer for. */
export const CatchUpRpc = rpc(CatchUpRequest, CatchUpReply)
/** Replica-to-replica: one chunk of the snapshot a CatchUpReply announced. */
export const SnapshotChunkRpc = rpc(SnapshotChunkRequest, SnapshotChunkReply)

/** Missed decisions are sent in one reply up to this size; beyond it (or beyond the log) a snapshot is. */
const MAX_CATCH_UP_DECISION_BYTES = 512 * 1024
/** How long a frozen snapshot is served: long enough for a joiner to fetch every chunk. */
const FROZEN_SNAPSHOT_TTL_MS = 60_000

const sha256Chain: HashChain = (previous, bytes) => createHash("sha256").update(previous).update(bytes).digest("hex")

interface ReadPoint {
  readonly instance: number
  readonly span: Tracer.Span | undefined
}

interface Applied {
  readonly result: KvResult
  readonly instance: number
  readonly span: Tracer.Span | undefined
}

type ReadWaiter = (instance: number, span: Tracer.Span | undefined) => void

export interface ReplicaHandle {
  readonly grpcAddress: string
  readonly engine: NicEngine
  readonly state: Effect.Effect<StateResponse>
}

export const runReplica = (options: ReplicaOptions): Effect.Effect<ReplicaHandle, unknown, Kernel | Scope.Scope> =>
  Effect.gen(function* () {
    const config = yield* KernelConfig
    const runtime = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(runtime)
    const runSync = Runtime.runSync(runtime)
    /** Whether spans are exported: without, a span per instance or per request is pure cost (a fiber each). */
    const tracing = yield* MessagingTracing
    const maxKeyBytes = options.maxKeyBytes ?? DEFAULT_MAX_KEY_BYTES
    const maxValueBytes = options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES

    /** This process start: what this replica proposes is its own only when it carries this incarnation. */
    const incarnation = newIncarnation()
    const kv = emptyKvState()
    let appliedInstance = 0
    let members = [...options.members]
    let nextRequest = 1
    /** Client calls waiting for their command to be applied: the result, or an error when it can never be. */
    const waiting = new Map<number, (outcome: Applied | HandlerError) => void>()
    let barrier: BarrierState<ReadWaiter> = emptyBarrierState()
    /** Reconfigure calls waiting for their membership value (`membershipKey`) to be applied. */
    const membershipWaiters = new Map<string, (instance: number) => void>()
    /** This process's membership values applied before their caller waited for them (a narrow race). */
    const membershipApplied = new Map<string, number>()
    const membershipKey = (ref: ProposalRef) => `${ref.engine}/${ref.seq}`
    /**
     * Serving clients: once the group is started, or joined and applied up to the instance it joined at.
     * Until then every KV call is answered UNAVAILABLE (its previous process's state is gone; the caller
     * retries elsewhere or later), and `runReplica` does not return (no "ready" line).
     */
    let serving = false
    /** The join the replica waits to be caught up to before it serves, and the self-quits seen when it was sent. */
    let pendingJoin: { readonly instance: number; readonly crashes: number } | undefined
    let onServing: (() => void) | undefined

    /** Catch-up (decision log, delivered index, snapshots) serves single-engine groups only (see engine.ts). */
    const singleEngine = (options.engines ?? 1) === 1
    const decisions = new DecisionLog(options.log)
    /** Which values are applied (TOB's delivered index, kept by the host so it matches its own state). */
    let delivered: DeliveredIndex = emptyDeliveredIndex
    /** The snapshot a peer was last sent, served chunk by chunk. */
    let frozen: { readonly snapshot: FrozenSnapshot; readonly atMs: number } | undefined
    /** State restored from a peer's snapshot that the engine has not joined past yet (see joinWith). */
    let restored: JoinSnapshot | undefined
    /** Catch-up requests wait for the next decision, so the joiner enters an instance as it starts. */
    let nextDecisionWaiters: Array<() => void> = []
    /** Set by every self-quit; the rejoin driver loops until a join sticks (see `driveRejoin`). */
    let needsRejoin = false
    let rejoining = false
    /** The replica's scope is closing (see the finalizer after the actor is spawned). */
    let closing = false
    let rejoinFiber: Fiber.RuntimeFiber<void> | undefined
    /** Runs the rejoin driver (driveRejoin, defined with the catch-up below) unless closing. */
    function startRejoin() {
      if (!closing) rejoinFiber = runFork(driveRejoin)
    }
    /** Self-quits and learner rejoins the engine reported: equal when it caught up by itself. */
    let engineCrashes = 0
    let engineRejoins = 0

    const log = (message: string) =>
      runFork(Effect.logWarning(message).pipe(Effect.annotateLogs({ replica: options.id })))

    // ---- applying decided batches (synchronous, in merged order) -------------------------------------------
    const onApplied = (batch: AppliedBatch) => {
      const span =
        tracing && batch.values.length > 0 ? runSync(recordInstanceSpan(options.group, options.id, batch)) : undefined
      appliedInstance = batch.instance
      if (singleEngine) decisions.append(batch.instance, batch.values)
      if (nextDecisionWaiters.length > 0) {
        const waiters = nextDecisionWaiters
        nextDecisionWaiters = []
        // After this batch is applied (queueMicrotask): the reply then includes it.
        queueMicrotask(() => {
          for (const w of waiters) w()
        })
      }
      for (const value of batch.values) {
        if (singleEngine) delivered = markDelivered(delivered, value)
        const own = value.proposer === options.id && value.incarnation === incarnation
        if (value.kind === "membership") {
          members = [...value.members]
          if (own) {
            const key = membershipKey({ engine: batch.engine, seq: value.seq })
            const waiter = membershipWaiters.get(key)
            membershipWaiters.delete(key)
            if (waiter === undefined) membershipApplied.set(key, batch.instance)
            else waiter(batch.instance)
          }
          continue
        }
        if (value.kind !== "client") continue
        let commands: ReadonlyArray<KvCommand>
        try {
          commands = KvBatch.decode(value.payload).commands
        } catch {
          // Every replica sees the same bytes and skips them the same way; the log stays identical.
          log(`skipping a decided value from ${value.proposer} that is not a KvBatch`)
          continue
        }
        chainValue(kv, value.payload, sha256Chain)
        for (const command of commands) {
          const result = applyCommand(kv, command)
          if (!own) continue
          if (result._tag === "ReadBarrier") {
            const step = onBarrierApplied(barrier, command.request)
            barrier = step.state
            for (const answer of step.answer) answer(batch.instance, span)
            if (step.propose !== undefined) proposeBarrier(step.propose)
            continue
          }
          const waiter = waiting.get(command.request)
          waiting.delete(command.request)
          waiter?.({ result, instance: batch.instance, span })
        }
      }
      if (!serving) checkServing()
    }

    /** Serves once the join sent last is caught up to (and the engine did not self-quit since). */
    function checkServing() {
      if (serving || pendingJoin === undefined) return
      if (appliedInstance < pendingJoin.instance - 1 || engineCrashes !== pendingJoin.crashes) return
      startServing()
    }
    function startServing() {
      serving = true
      pendingJoin = undefined
      onServing?.()
    }
    const notServing = () =>
      unavailable(`replica ${options.id} is joining group ${options.group}: not serving yet, try again or elsewhere`)

    /** Set once the engine is up; the gRPC server binds first so a port clash fails before the group forms. */
    let engine: NicEngine | undefined
    const engineOrFail = Effect.suspend(() =>
      engine === undefined ? Effect.fail(new EngineError({ reason: "engine not started yet" })) : Effect.succeed(engine)
    )

    // ---- proposing ------------------------------------------------------------------------------------------
    const unavailable = (reason: string) =>
      new HandlerError({ code: ErrorCode.ERROR_CODE_UNAVAILABLE, message: reason })

    /**
     * Commands submitted in this turn of the event loop: proposed together, as one value (a KvBatch), when the
     * turn ends or once they reach MAX_PROPOSAL_BYTES. Consensus costs per value (every engine decodes each
     * one 2(N-1) times an instance), so a burst of requests from a gRPC session costs one value, not one each.
     */
    let outgoing: Array<KvCommand> = []
    let outgoingBytes = 0
    const proposeOutgoing = () => {
      const commands = outgoing
      outgoing = []
      outgoingBytes = 0
      if (commands.length === 0) return
      propose(KvBatch.encode({ commands }).finish(), (reason) => {
        for (const command of commands) {
          const waiter = waiting.get(command.request)
          waiting.delete(command.request)
          waiter?.(new HandlerError({ code: ErrorCode.ERROR_CODE_OVERLOADED, message: reason }))
        }
      })
    }

    /**
     * Queues a command for the next proposal. `onOutcome` gets its result once it is applied here (this
     * replica's answer), or the reason it never will be. Returns the command's request id.
     */
    const enqueue = (op: KvCommand["op"], onOutcome: (outcome: Applied | HandlerError) => void): number => {
      if (!serving) {
        onOutcome(notServing())
        return 0
      }
      const request = nextRequest++
      waiting.set(request, onOutcome)
      if (outgoing.length === 0) setImmediate(proposeOutgoing)
      outgoing.push({ request, op })
      outgoingBytes += commandBytes(op)
      if (outgoingBytes >= MAX_PROPOSAL_BYTES) proposeOutgoing()
      return request
    }

    /** Proposes a command and waits until it is applied here. */
    const submit = (op: KvCommand["op"]): Effect.Effect<Applied, HandlerError> =>
      Effect.async<Applied, HandlerError>((resume) => {
        const request = enqueue(op, (outcome) =>
          resume(outcome instanceof HandlerError ? Effect.fail(outcome) : Effect.succeed(outcome))
        )
        return Effect.sync(() => waiting.delete(request))
      })

    /** Hands a value to the engine; `onRejected` when it cannot take it (no fiber per write: a hot path). */
    const propose = (payload: Uint8Array, onRejected: (reason: string) => void) =>
      engine === undefined ? onRejected("engine not started yet") : engine.propose(payload, onRejected)

    /** A barrier's request id is its id (read-barrier.ts): only the one in flight answers reads. */
    function proposeBarrier(id: number) {
      const payload = KvBatch.encode({ commands: [{ request: id, op: { $case: "readBarrier", value: {} } }] }).finish()
      propose(payload, (reason) => {
        const failed = onBarrierFailed(barrier)
        barrier = failed.state
        log(`read barrier not proposed: ${reason}`)
        for (const read of failed.fail) read(-1, undefined)
      })
    }

    /** Calls `onPoint` once a barrier proposed after this call is applied: the state then reflects every earlier write. */
    const awaitReadPoint = (onPoint: (point: ReadPoint | HandlerError) => void) => {
      if (!serving) return onPoint(notServing())
      const step = onRead(barrier, (instance, span) =>
        onPoint(instance < 0 ? unavailable("read barrier could not be proposed") : { instance, span })
      )
      barrier = step.state
      if (step.propose !== undefined) proposeBarrier(step.propose)
    }
    const readPoint = Effect.async<ReadPoint, HandlerError>((resume) =>
      awaitReadPoint((point) => resume(point instanceof HandlerError ? Effect.fail(point) : Effect.succeed(point)))
    )

    // ---- gRPC -----------------------------------------------------------------------------------------------
    /**
     * An argument's INVALID_ARGUMENT, if any. Each operation's check (a write's is in its `WriteOp`) is asked by
     * its Effect handler and by the session shortcut alike.
     */
    const invalidKey = (key: string): InvalidRequestError | undefined =>
      key === ""
        ? new InvalidRequestError({ field: "key", reason: "must not be empty" })
        : Buffer.byteLength(key) > maxKeyBytes
          ? new InvalidRequestError({ field: "key", reason: `longer than ${maxKeyBytes} bytes` })
          : undefined
    const invalidValue = (field: string, value: Uint8Array): InvalidRequestError | undefined =>
      value.length > maxValueBytes
        ? new InvalidRequestError({ field, reason: `${value.length} bytes exceeds the ${maxValueBytes}-byte limit` })
        : undefined
    const failIfInvalid = (error: InvalidRequestError | undefined) =>
      error === undefined ? Effect.void : Effect.fail(error)

    // Responses, the same from the Effect handlers and from the session shortcut.
    const getResponse = (key: string, instance: number): GetResponse => {
      const record = kv.records.get(key)
      return {
        found: record !== undefined,
        value: record ? Buffer.from(record.value) : Buffer.alloc(0),
        version: record?.version ?? 0,
        instance
      }
    }
    const setResponse = ({ result, instance }: Applied): SetResponse => ({
      instance,
      version: result._tag === "Set" ? result.version : 0
    })
    const deleteResponse = ({ result, instance }: Applied): DeleteResponse => ({
      existed: result._tag === "Delete" && result.existed,
      instance
    })
    const compareAndSetResponse = ({ result, instance }: Applied): CompareAndSetResponse => {
      const current = result._tag === "CompareAndSet" ? result.current : undefined
      return {
        swapped: result._tag === "CompareAndSet" && result.swapped,
        current: current ? Buffer.from(current) : Buffer.alloc(0),
        currentFound: current !== undefined,
        instance
      }
    }

    /**
     * A write: its arguments' check, the command it proposes, and its response once applied. The Effect
     * handler and the session shortcut are both made from it (`handleWrite`, `shortcutWrite`).
     */
    interface WriteOp<I, O> {
      readonly invalid: (request: I) => InvalidRequestError | undefined
      readonly command: (request: I) => KvCommand["op"]
      readonly response: (applied: Applied) => O
    }
    const setOp: WriteOp<SetRequest, SetResponse> = {
      invalid: (r) => invalidKey(r.key) ?? invalidValue("value", r.value),
      command: (value) => ({ $case: "set", value }),
      response: setResponse
    }
    const deleteOp: WriteOp<DeleteRequest, DeleteResponse> = {
      invalid: (r) => invalidKey(r.key),
      command: (value) => ({ $case: "delete", value }),
      response: deleteResponse
    }
    const compareAndSetOp: WriteOp<CompareAndSetRequest, CompareAndSetResponse> = {
      invalid: (r) => invalidKey(r.key) ?? invalidValue("value", r.value) ?? invalidValue("expected", r.expected),
      command: (value) => ({ $case: "compareAndSet", value }),
      response: compareAndSetResponse
    }

    /** Links the client's server span to the consensus instance that decided its command. */
    const linkInstance = (span: Tracer.Span | undefined) =>
      span === undefined
        ? Effect.void
        : Effect.flatMap(Effect.option(Effect.currentSpan), (current) =>
            Effect.sync(() => {
              if (current._tag === "Some") current.value.addLinks?.([{ _tag: "SpanLink", span, attributes: {} }])
            })
          )

    const engineState = Effect.gen(function* () {
      if (engine === undefined) return undefined
      const stats = yield* engine.stats.pipe(Effect.orElseSucceed(() => []))
      const first = stats[0]
      if (first === undefined) return undefined
      const sum = (f: (s: (typeof stats)[number]) => number) => stats.reduce((acc, s) => acc + f(s), 0)
      const timer = engine.roundTimer
      return EngineState.fromPartial({
        engines: stats.length,
        instancesDecided: sum((s) => s.instancesDecided),
        roundsDecided: sum((s) => s.roundsDecided),
        selfQuits: sum((s) => s.crashes),
        droppedMessages: sum((s) => s.dropped),
        goneReports: sum((s) => s.goneReports),
        pending: sum((s) => s.pending),
        roundPeriodMs: roundPeriodMs(timer),
        roundTimeP50Ms: first.roundTimeMs.p50,
        roundTimeP99Ms: first.roundTimeMs.p99,
        roundTimeMaxMs: first.roundTimeMs.max,
        interactionP50Ms: first.interactionLatencyMs.p50,
        interactionP99Ms: first.interactionLatencyMs.p99,
        interactionMaxMs: first.interactionLatencyMs.max
      })
    })

    const stateResponse = Effect.map(
      engineState,
      (engineStats): StateResponse => ({
        replica: options.id,
        appliedInstance,
        appliedCommands: kv.appliedCommands,
        stateHash: kv.stateHash,
        keys: kv.records.size,
        members,
        ...(engineStats === undefined ? {} : { engine: engineStats })
      })
    )

    const get = (request: GetRequest) =>
      Effect.gen(function* () {
        yield* failIfInvalid(invalidKey(request.key))
        const point = yield* readPoint
        yield* linkInstance(point.span)
        return getResponse(request.key, point.instance)
      })
    /** A write's Effect handler: proposes it, waits until it is applied, links the span to its instance. */
    const handleWrite =
      <I, O>(op: WriteOp<I, O>) =>
      (request: I) =>
        Effect.gen(function* () {
          yield* failIfInvalid(op.invalid(request))
          const applied = yield* submit(op.command(request))
          yield* linkInstance(applied.span)
          return op.response(applied)
        })
    const set = handleWrite(setOp)
    const del = handleWrite(deleteOp)
    const compareAndSet = handleWrite(compareAndSetOp)
    const answerInSession = makeSessionAnswerer({ get, set, delete: del, compareAndSet }, (message, cause) =>
      runFork(Effect.logError(message, cause).pipe(Effect.annotateLogs({ replica: options.id })))
    )
    /**
     * Session requests without a fiber each when nothing traces them (with tracing, every request is a server
     * span linked to its instance, which the Effect handlers make). Invalid ones still take the Effect path.
     */
    const shortcutWrite =
      <I, O>(op: WriteOp<I, O>) =>
      (request: I, done: (outcome: O | HandlerError) => void): boolean => {
        if (op.invalid(request) !== undefined) return false
        enqueue(op.command(request), (outcome) =>
          done(outcome instanceof HandlerError ? outcome : op.response(outcome))
        )
        return true
      }
    const shortcut = makeSessionShortcut({
      get: (request, done) => {
        if (invalidKey(request.key) !== undefined) return false
        awaitReadPoint((point) =>
          done(point instanceof HandlerError ? point : getResponse(request.key, point.instance))
        )
        return true
      },
      set: shortcutWrite(setOp),
      delete: shortcutWrite(deleteOp),
      compareAndSet: shortcutWrite(compareAndSetOp)
    })

    /** The instance whose decision applied this replica's membership value `key`. */
    const awaitMembership = (key: string) =>
      Effect.async<number>((resume) => {
        const applied = membershipApplied.get(key)
        membershipApplied.delete(key)
        if (applied !== undefined) return resume(Effect.succeed(applied))
        membershipWaiters.set(key, (instance) => resume(Effect.succeed(instance)))
        return Effect.sync(() => membershipWaiters.delete(key))
      })

    const service = grpcService(KVService, {
      get,
      set,
      delete: del,
      compareAndSet,
      session: framedSession(kvSessionFrames, tracing ? answerInSession : { answer: answerInSession, shortcut }),
      state: () => stateResponse,
      reconfigure: (request) =>
        Effect.gen(function* () {
          if (!isValidMembers(request.members)) {
            return yield* new InvalidRequestError({
              field: "members",
              reason: "need an odd number (2t+1) of distinct, non-empty replica ids"
            })
          }
          if (!serving) return yield* notServing()
          const running = yield* engineOrFail.pipe(Effect.mapError((e) => unavailable(e.reason)))
          const refs = yield* running
            .proposeMembership(request.members)
            .pipe(Effect.mapError((e) => unavailable(e.reason)))
          // Every engine's membership value, matched by its identity (this incarnation, engine, seq).
          const instances = yield* Effect.forEach(refs, (ref) => awaitMembership(membershipKey(ref)))
          return ReconfigureResponse.fromPartial({ decidedInstance: Math.max(...instances) })
        })
    })

    const { protoRoot } = yield* Effect.promise(() => import("@reef/proto"))
    const server = yield* serveGrpc({
      port: options.grpcPort,
      ...(options.grpcHost === undefined ? {} : { host: options.grpcHost }),
      services: [service],
      reflection: { includeDirs: [protoRoot], protoFiles: ["reef/v1/kv.proto"] }
    })

    engine = yield* startEngine(
      {
        natsUrl: options.natsUrl,
        cluster: config.cluster,
        group: options.group,
        self: options.id,
        incarnation,
        members: options.members,
        ...(options.engines === undefined ? {} : { engines: options.engines }),
        ...(options.interactionMs === undefined ? {} : { interactionMs: options.interactionMs }),
        ...(options.minInteractionMs === undefined ? {} : { minInteractionMs: options.minInteractionMs }),
        ...(options.instanceGapMs === undefined ? {} : { instanceGapMs: options.instanceGapMs }),
        ...(options.roundClose === undefined ? {} : { roundClose: options.roundClose })
      } satisfies EngineOptions,
      {
        onApplied,
        onCrashed: (engineIndex, instance, reason) => {
          // Shutting down: peers leave and the engine thread stops; there is nothing to rejoin.
          if (closing) return
          log(`engine ${engineIndex} self-quit at instance ${instance}: ${reason}; rejoining`)
          engineCrashes++
          needsRejoin = true
          if (!rejoining) startRejoin()
        },
        onRejoined: (engineIndex, instance) => {
          engineRejoins++
          // Caught up as a learner: every instance before `instance` is delivered, so it serves once applied.
          if (!serving) {
            pendingJoin = { instance, crashes: engineCrashes }
            checkServing()
          }
          runFork(
            Effect.logInfo(`engine ${engineIndex} caught up as a learner and takes part again at instance ${instance}`)
          )
        },
        onDropped: (engineIndex, reason) => log(`engine ${engineIndex} dropped a malformed round message: ${reason}`),
        onLog: (_level, message) => log(message)
      }
    )

    // ---- joining: catch up from a peer's log, or start the group ---------------------------------------------
    const messenger = yield* Messenger
    const running = engine

    yield* spawn(
      defineActor({
        role: "replica",
        description: "POPUC replica: host server of a replicated KV group (gRPC reef.v1.KV)",
        initialState: Effect.succeed(undefined),
        handlers: [
          onAsk(CatchUpRpc, (request) =>
            request.group !== options.group
              ? Effect.fail(
                  new HandlerError({
                    code: ErrorCode.ERROR_CODE_INVALID_ARGUMENT,
                    message: `not in group ${request.group}`
                  })
                )
              : Effect.gen(function* () {
                  // Answer right after the next decision: the joiner then starts the instance that just began
                  // (within one round of its peers) instead of one already half over.
                  // A group that has decided nothing yet is still forming: answer at once (the asker sync-starts).
                  // So is a replica whose own engine is down: waiting would stall a group whose members all
                  // self-quit at once (they must all rejoin from what they have).
                  if (decisions.lastInstance > 0 && !rejoining && !needsRejoin && !closing) {
                    yield* Effect.async<void>((resume) => {
                      nextDecisionWaiters.push(() => resume(Effect.void))
                    }).pipe(Effect.timeout("5 seconds"), Effect.ignore)
                  }
                  const stats = yield* running.stats.pipe(Effect.orElseSucceed(() => []))
                  const schedule = (stats[0]?.schedule.epochs ?? [{ fromInstance: 1, members }]).map((e) => ({
                    fromInstance: e.fromInstance,
                    members: [...e.members]
                  }))
                  const common = {
                    rejoining: rejoining || needsRejoin,
                    joinInstance: decisions.lastInstance + 1,
                    schedule
                  }
                  const since = decisions.since(request.fromInstance, MAX_CATCH_UP_DECISION_BYTES)
                  if (since !== undefined) {
                    return CatchUpReply.fromPartial({
                      ...common,
                      decisions: since.map((d) => ({ instance: d.instance, values: d.values.map(valueToWire) }))
                    })
                  }
                  // Too far behind for the log (or for one message): the state itself, frozen as of now.
                  const snapshot = freezeForPeer()
                  yield* Effect.logInfo(
                    `sending a snapshot at instance ${snapshot.instance} (${snapshot.chunks.length} chunks) to a peer at ${request.fromInstance}`
                  )
                  return CatchUpReply.fromPartial({
                    ...common,
                    hasSnapshot: true,
                    snapshotId: snapshot.id,
                    snapshotInstance: snapshot.instance,
                    snapshotHash: snapshot.stateHash,
                    snapshotCommands: snapshot.appliedCommands,
                    snapshotDelivered: deliveredToWire(snapshot.delivered),
                    snapshotChunks: snapshot.chunks.length
                  })
                })
          ),
          onAsk(SnapshotChunkRpc, (request) =>
            Effect.suspend(() => {
              const chunk =
                frozen?.snapshot.id === request.snapshotId ? frozen.snapshot.chunks[request.chunk] : undefined
              return chunk === undefined
                ? Effect.fail(
                    new HandlerError({
                      code: ErrorCode.ERROR_CODE_NOT_FOUND,
                      message: `no chunk ${request.chunk} of snapshot ${request.snapshotId} (expired or never sent)`
                    })
                  )
                : Effect.succeed(SnapshotChunkReply.fromPartial({ entries: [...chunk] }))
            })
          )
        ]
      }),
      options.id
    )

    /** The state as of the last applied instance; reused while current, so many joiners share one copy. */
    function freezeForPeer(): FrozenSnapshot {
      const now = Date.now()
      if (frozen === undefined || frozen.snapshot.instance !== appliedInstance + 1) {
        frozen = {
          snapshot: freezeSnapshot((frozen?.snapshot.id ?? 0) + 1, kv, appliedInstance + 1, delivered),
          atMs: now
        }
      } else frozen = { snapshot: frozen.snapshot, atMs: now }
      return frozen.snapshot
    }
    // A frozen snapshot nobody fetches any more is let go (it may hold a whole state's worth of references).
    yield* Effect.sync(() => {
      if (frozen !== undefined && Date.now() - frozen.atMs > FROZEN_SNAPSHOT_TTL_MS) frozen = undefined
    }).pipe(Effect.repeat(Schedule.spaced("10 seconds")), Effect.forkScoped)

    // Closing: no more decisions will come, so catch-up answers waiting for one are released now (the actor's
    // drain would otherwise wait out their timeout). Added after the actor, so it runs before its drain.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        const waiters = nextDecisionWaiters
        nextDecisionWaiters = []
        for (const w of waiters) w()
        // A rejoin in progress would keep asking peers that are leaving too (and keep the process alive).
        return rejoinFiber === undefined ? Effect.void : Fiber.interrupt(rejoinFiber)
      })
    )

    /**
     * Asks every peer: `best` is the most advanced answer (undefined when none has decided anything yet),
     * `answered` how many peers replied at all.
     */
    const catchUp = Effect.gen(function* () {
      const peers = members.filter((m) => m !== options.id)
      // The engine's own position (its stats arrive after every delivery it made, so the host applied them).
      const enginePosition = yield* running.stats.pipe(
        Effect.map((stats) => stats[0]?.nextDeliverInstance ?? appliedInstance + 1),
        Effect.orElseSucceed(() => appliedInstance + 1)
      )
      // After a snapshot the host is ahead of its engine: what is missing starts where the snapshot ends.
      const position = Math.max(enginePosition, restored?.instance ?? 0)
      const replies = yield* Effect.forEach(
        peers,
        (peer) =>
          messenger
            .ask(
              { cluster: config.cluster, role: "replica", id: peer },
              CatchUpRpc,
              { group: options.group, fromInstance: position },
              { timeoutMs: 8_000 }
            )
            .pipe(Effect.option),
        { concurrency: "unbounded" }
      )
      // Prefer a peer whose engine runs; when none does, the group collapsed (everyone self-quit) and restarts
      // together: all join the most advanced instance, the lowest id opens it and the others follow its
      // round-1 message, which is what sync-start does for the first instance.
      const answered = replies.flatMap((r, i) => (r._tag === "Some" ? [{ peer: peers[i]!, reply: r.value }] : []))
      const useful = answered.filter((a) => a.reply.joinInstance > 1)
      const live = useful.filter((a) => !a.reply.rejoining)
      const pool = live.length > 0 ? live : useful
      let best: { peer: string; reply: CatchUpReply } | undefined
      for (const a of pool) if (best === undefined || a.reply.joinInstance > best.reply.joinInstance) best = a
      if (best === undefined) return { best: undefined, answered: answered.length }
      const collapsed = live.length === 0
      const leader = [options.id, ...answered.map((a) => a.peer)].sort()[0]
      return {
        best: { peer: best.peer, reply: best.reply, startNow: !collapsed || leader === options.id },
        answered: answered.length
      }
    })

    /**
     * Replaces this replica's state with `peer`'s frozen snapshot. Client calls still waiting here may have
     * been decided in the instances the snapshot skips: they get UNAVAILABLE (outcome unknown, like a
     * timeout) rather than wait forever; the values still pending in the engine are proposed again.
     */
    const restoreFrom = (peer: string, reply: CatchUpReply) =>
      Effect.gen(function* () {
        const chunks = yield* Effect.forEach(
          Array.from({ length: reply.snapshotChunks }, (_, chunk) => chunk),
          (chunk) =>
            messenger
              .ask(
                { cluster: config.cluster, role: "replica", id: peer },
                SnapshotChunkRpc,
                { group: options.group, snapshotId: reply.snapshotId, chunk },
                { timeoutMs: 8_000 }
              )
              .pipe(Effect.map((r) => r.entries))
        )
        installSnapshot(kv, { stateHash: reply.snapshotHash, appliedCommands: reply.snapshotCommands, chunks })
        appliedInstance = reply.snapshotInstance - 1
        decisions.reset(reply.snapshotInstance)
        delivered = deliveredFromWire(reply.snapshotDelivered)
        const epoch = reply.schedule.filter((e) => e.fromInstance <= reply.snapshotInstance).at(-1)
        if (epoch !== undefined) members = [...epoch.members]
        restored = { instance: reply.snapshotInstance, delivered }
        const unknown = () => unavailable("this replica restored its state from a snapshot: outcome unknown")
        for (const waiter of waiting.values()) waiter(unknown())
        waiting.clear()
        const failed = onBarrierFailed(barrier)
        barrier = failed.state
        for (const read of failed.fail) read(-1, undefined)
        yield* Effect.logInfo(
          `restored the state of ${peer} at instance ${reply.snapshotInstance} (${kv.records.size} keys, ${chunks.length} chunks)`
        )
      })

    /**
     * Joins with what a peer sent. A snapshot is installed first and the join waits for the next attempt,
     * which asks for the decisions after it (the group moved on while the chunks were fetched).
     */
    const joinWith = ({ peer, reply, startNow }: { peer: string; reply: CatchUpReply; startNow: boolean }) =>
      reply.hasSnapshot
        ? Effect.zipRight(
            restoreFrom(peer, reply),
            Effect.fail("restored from a snapshot; catching up on the decisions after it")
          )
        : Effect.sync(() => {
            pendingJoin = { instance: reply.joinInstance, crashes: engineCrashes }
          }).pipe(
            Effect.zipRight(
              running.join({
                startNow,
                startInstance: reply.joinInstance,
                decisions: reply.decisions.map((d) => ({
                  instance: d.instance,
                  values: d.values.flatMap((v) => {
                    const value = valueFromWire(v)
                    return value === undefined ? [] : [value]
                  })
                })),
                schedule: { epochs: reply.schedule.map((e) => ({ fromInstance: e.fromInstance, members: e.members })) },
                ...(restored === undefined ? {} : { snapshot: restored })
              })
            ),
            Effect.tap(() =>
              Effect.sync(() => {
                restored = undefined
                checkServing()
              })
            )
          )

    /** Fetches what was missed from the most advanced peer and joins where it is. */
    const rejoinOnce = Effect.gen(function* () {
      const found = (yield* catchUp).best
      if (found === undefined) return yield* Effect.fail("no peer can help yet")
      yield* joinWith(found)
      yield* Effect.logInfo(
        `joined group ${options.group} at instance ${found.reply.joinInstance}${found.startNow ? "" : " (following the restart leader)"}`
      )
    }).pipe(Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.compose(Schedule.recurs(50)))))

    /**
     * One driver at a time: a self-quit while a join is in progress (the old attempt fell behind) only marks
     * that another attempt is needed, so joins never race each other over the engine's position.
     */
    const driveRejoin: Effect.Effect<void> = Effect.gen(function* () {
      rejoining = true
      while (needsRejoin && !closing) {
        needsRejoin = false
        // The engine usually catches up by itself as a learner within an instance or two (core/learner.ts):
        // give it that long before fetching a state transfer from a peer.
        const periodMs = roundPeriodMs(running.roundTimer)
        // Not after a snapshot restore: the engine must then join past the snapshot, whatever it learns.
        const learned = yield* Effect.sync(
          () => restored === undefined && engineRejoins >= engineCrashes && !needsRejoin
        ).pipe(
          Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout(`${Math.max(100, 8 * periodMs)} millis`),
          Effect.option
        )
        if (learned._tag === "Some") continue
        const before = appliedInstance
        yield* rejoinOnce
        // Watchdog: a join that decides nothing within a bounded time (the restart leader it follows is
        // gone, say) is tried again rather than waited on forever.
        const limitMs = Math.max(2_000, 20 * periodMs)
        const progressed = yield* Effect.sync(() => appliedInstance > before || needsRejoin).pipe(
          Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("50 millis") }),
          Effect.timeout(`${limitMs} millis`),
          Effect.option
        )
        if (progressed._tag === "None") {
          yield* Effect.logWarning(`no decision within ${limitMs} ms of joining; joining again`)
          needsRejoin = true
        }
      }
    }).pipe(
      Effect.catchAll((error) => Effect.logError(`could not rejoin group ${options.group}`, error)),
      Effect.ensuring(Effect.sync(() => (rejoining = false)))
    )

    // A group that has decided something is running: join it. Otherwise start it with the others.
    // Bootstrap barrier: a new group starts its first instance only once every peer answers (a majority after
    // 10 s, when some member is down). A peer still starting up (loading, calibrating, on a busy machine)
    // would take the first round-1 messages late, and the early replicas would suspect it and each other.
    rejoining = true
    const startedAt = Date.now()
    const peerCount = members.length - 1
    const waitForPeers = ({ best, answered }: Effect.Effect.Success<typeof catchUp>) => {
      if (best !== undefined || answered >= peerCount) return false
      const waited = Date.now() - startedAt
      return waited < 10_000 || (answered < Math.floor(peerCount / 2) && waited < 60_000)
    }
    const asked = yield* catchUp.pipe(
      Effect.repeat(Schedule.spaced("100 millis").pipe(Schedule.whileInput(waitForPeers), Schedule.passthrough))
    )
    rejoining = false
    const initial = asked.best
    if (initial === undefined && asked.answered < peerCount) {
      yield* Effect.logWarning(`starting group ${options.group} with ${asked.answered} of ${peerCount} peers answering`)
    }
    if (initial === undefined) {
      yield* running.syncStart
      startServing()
    } else if (initial.reply.hasSnapshot) {
      // Far behind a running group: restore its state, then join like a replica that self-quit.
      yield* restoreFrom(initial.peer, initial.reply)
      needsRejoin = true
    } else {
      yield* joinWith(initial)
      yield* Effect.logInfo(`joined running group ${options.group} at instance ${initial.reply.joinInstance}`)
    }
    if (needsRejoin && !rejoining) startRejoin()
    // "Ready" means ready: joined, and caught up to the instance it joined at.
    yield* Effect.async<void>((resume) => {
      if (serving) return resume(Effect.void)
      onServing = () => resume(Effect.void)
    })
    yield* Effect.logInfo(`serving: applied up to instance ${appliedInstance} of group ${options.group}`)

    return { grpcAddress: server.address, engine: running, state: stateResponse }
  })
