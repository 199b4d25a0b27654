/**
 * reef.v1.KV over gRPC: argument checks, the unary handlers, the pipelined session (with a fiber-free shortcut
 * when nothing traces it), State and Reconfigure. Writes wait for their command to be applied (proposer.ts),
 * reads for a read barrier, so every operation is linearizable.
 */
import { framedSession, grpcService, InvalidRequestError } from "@reef/grpc"
import { HandlerError } from "@reef/kernel"
import { isValidMembers, type NicEngine, roundPeriodMs } from "@reef/nic"
import {
  type CompareAndSetRequest,
  CompareAndSetRequest as CompareAndSetRequestCodec,
  type CompareAndSetResponse,
  type DeleteRequest,
  DeleteRequest as DeleteRequestCodec,
  type DeleteResponse,
  EngineState,
  type GetRequest,
  GetRequest as GetRequestCodec,
  type GetResponse,
  KVService,
  type KvCommand,
  KvRequests,
  ReconfigureRequest,
  ReconfigureResponse,
  type SetRequest,
  SetRequest as SetRequestCodec,
  type SetResponse,
  StateRequest,
  type StateResponse
} from "@reef/proto"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import { kvSessionFrames, makeSessionAnswerer, makeSessionShortcut } from "./kv-session.js"
import { type Applied, type Proposer, unavailable } from "./proposer.js"
import type { ReplicaState } from "./replica-state.js"
import { isWellFormed, withStrictRequests } from "./strict-utf8.js"

export const DEFAULT_MAX_KEY_BYTES = 1024
export const DEFAULT_MAX_VALUE_BYTES = 64 * 1024

export interface KvLimits {
  readonly maxKeyBytes: number
  readonly maxValueBytes: number
}

/** What a request's arguments are checked against, and why one is refused. */
export const invalidKey = (limits: KvLimits, key: string): InvalidRequestError | undefined =>
  key === ""
    ? new InvalidRequestError({ field: "key", reason: "must not be empty" })
    : !isWellFormed(key)
      ? new InvalidRequestError({ field: "key", reason: "is not valid UTF-8" })
      : Buffer.byteLength(key) > limits.maxKeyBytes
        ? new InvalidRequestError({ field: "key", reason: `longer than ${limits.maxKeyBytes} bytes` })
        : undefined

export const invalidValue = (limits: KvLimits, field: string, value: Uint8Array): InvalidRequestError | undefined =>
  value.length > limits.maxValueBytes
    ? new InvalidRequestError({ field, reason: `${value.length} bytes exceeds the ${limits.maxValueBytes}-byte limit` })
    : undefined

/** `expect_absent` with a non-empty `expected` asks two things at once: refused rather than one chosen. */
export const ambiguousExpectation = (request: CompareAndSetRequest): InvalidRequestError | undefined =>
  request.expectAbsent && request.expected.length > 0
    ? new InvalidRequestError({
        field: "expected",
        reason: "must be empty when expect_absent is set (expect a value, or the key's absence, not both)"
      })
    : undefined

type Span = Tracer.Span

/**
 * A write: its arguments' check, the command it proposes, and its response once applied. The Effect handler
 * and the session shortcut are both made from it.
 */
interface WriteOp<I, O> {
  readonly invalid: (request: I) => InvalidRequestError | undefined
  readonly command: (request: I) => KvCommand["op"]
  readonly response: (applied: Applied<Span>) => O
}

const setOp = (limits: KvLimits): WriteOp<SetRequest, SetResponse> => ({
  invalid: (r) => invalidKey(limits, r.key) ?? invalidValue(limits, "value", r.value),
  command: (value) => ({ $case: "set", value }),
  response: ({ result, instance }) => ({ instance, version: result._tag === "Set" ? result.version : 0 })
})

const deleteOp = (limits: KvLimits): WriteOp<DeleteRequest, DeleteResponse> => ({
  invalid: (r) => invalidKey(limits, r.key),
  command: (value) => ({ $case: "delete", value }),
  response: ({ result, instance }) => ({ existed: result._tag === "Delete" && result.existed, instance })
})

const compareAndSetOp = (limits: KvLimits): WriteOp<CompareAndSetRequest, CompareAndSetResponse> => ({
  invalid: (r) =>
    invalidKey(limits, r.key) ??
    invalidValue(limits, "value", r.value) ??
    invalidValue(limits, "expected", r.expected) ??
    ambiguousExpectation(r),
  command: (value) => ({ $case: "compareAndSet", value }),
  response: ({ result, instance }) => {
    const current = result._tag === "CompareAndSet" ? result.current : undefined
    return {
      swapped: result._tag === "CompareAndSet" && result.swapped,
      current: current ? Buffer.from(current) : Buffer.alloc(0),
      currentFound: current !== undefined,
      instance
    }
  }
})

const failIfInvalid = (error: InvalidRequestError | undefined) =>
  error === undefined ? Effect.void : Effect.fail(error)

/** Links the client's server span to the consensus instance that decided its command. */
const linkInstance = (span: Span | undefined) =>
  span === undefined
    ? Effect.void
    : Effect.flatMap(Effect.option(Effect.currentSpan), (current) =>
        Effect.sync(() => {
          if (current._tag === "Some") current.value.addLinks?.([{ _tag: "SpanLink", span, attributes: {} }])
        })
      )

/** The KV service reads its requests strictly (strict-utf8.ts). */
const strictKvService = withStrictRequests(KVService, {
  get: GetRequestCodec,
  set: SetRequestCodec,
  delete: DeleteRequestCodec,
  compareAndSet: CompareAndSetRequestCodec,
  state: StateRequest,
  reconfigure: ReconfigureRequest,
  session: KvRequests
})

export interface KvServiceOptions {
  readonly state: ReplicaState
  readonly proposer: Proposer<Span>
  readonly engine: () => NicEngine | undefined
  readonly limits: KvLimits
  /** With tracing every session request is a server span (the Effect path); without, the shortcut runs. */
  readonly tracing: boolean
  readonly logDefect: (message: string, cause: Cause.Cause<unknown>) => void
}

export const makeKvService = (options: KvServiceOptions) => {
  const { state, proposer, limits } = options
  const set = setOp(limits)
  const del = deleteOp(limits)
  const cas = compareAndSetOp(limits)

  const getResponse = (key: string, instance: number): GetResponse => {
    const record = state.kv.records.get(key)
    return {
      found: record !== undefined,
      value: record ? Buffer.from(record.value) : Buffer.alloc(0),
      version: record?.version ?? 0,
      instance
    }
  }

  const get = (request: GetRequest) =>
    Effect.gen(function* () {
      yield* failIfInvalid(invalidKey(limits, request.key))
      const point = yield* proposer.readPoint()
      yield* linkInstance(point.span)
      return getResponse(request.key, point.instance)
    })
  /** A write's Effect handler: proposes it, waits until it is applied, links the span to its instance. */
  const handleWrite =
    <I, O>(op: WriteOp<I, O>) =>
    (request: I) =>
      Effect.gen(function* () {
        yield* failIfInvalid(op.invalid(request))
        const applied = yield* proposer.submitEffect(op.command(request))
        yield* linkInstance(applied.span)
        return op.response(applied)
      })
  /**
   * Session requests without a fiber each when nothing traces them. Invalid ones still take the Effect path,
   * which words and traces them like any other failure.
   */
  const shortcutWrite =
    <I, O>(op: WriteOp<I, O>) =>
    (request: I, done: (outcome: O | HandlerError) => void): boolean => {
      if (op.invalid(request) !== undefined) return false
      proposer.submit(op.command(request), (outcome) =>
        done(outcome instanceof HandlerError ? outcome : op.response(outcome))
      )
      return true
    }
  const operations = {
    get,
    set: handleWrite(set),
    delete: handleWrite(del),
    compareAndSet: handleWrite(cas)
  }
  const answerInSession = makeSessionAnswerer(operations, options.logDefect)
  const shortcut = makeSessionShortcut({
    get: (request, done) => {
      if (invalidKey(limits, request.key) !== undefined) return false
      proposer.awaitReadPoint((point) =>
        done(point instanceof HandlerError ? point : getResponse(request.key, point.instance))
      )
      return true
    },
    set: shortcutWrite(set),
    delete: shortcutWrite(del),
    compareAndSet: shortcutWrite(cas)
  })

  const engineState = Effect.gen(function* () {
    const engine = options.engine()
    if (engine === undefined) return undefined
    const stats = yield* engine.stats.pipe(Effect.orElseSucceed(() => []))
    const first = stats[0]
    if (first === undefined) return undefined
    const sum = (f: (s: (typeof stats)[number]) => number) => stats.reduce((acc, s) => acc + f(s), 0)
    return EngineState.fromPartial({
      engines: stats.length,
      instancesDecided: sum((s) => s.instancesDecided),
      roundsDecided: sum((s) => s.roundsDecided),
      selfQuits: sum((s) => s.crashes),
      droppedMessages: sum((s) => s.dropped),
      goneReports: sum((s) => s.goneReports),
      pending: sum((s) => s.pending),
      roundPeriodMs: roundPeriodMs(engine.roundTimer),
      roundTimeP50Ms: first.roundTimeMs.p50,
      roundTimeP99Ms: first.roundTimeMs.p99,
      roundTimeMaxMs: first.roundTimeMs.max,
      interactionP50Ms: first.interactionLatencyMs.p50,
      interactionP99Ms: first.interactionLatencyMs.p99,
      interactionMaxMs: first.interactionLatencyMs.max
    })
  })

  const stateResponse: Effect.Effect<StateResponse> = Effect.map(engineState, (engine) => ({
    replica: state.id,
    appliedInstance: state.appliedInstance,
    appliedCommands: state.kv.appliedCommands,
    stateHash: state.kv.stateHash,
    keys: state.kv.records.size,
    members: [...state.members],
    ...(engine === undefined ? {} : { engine }),
    snapshotsRestored: state.snapshotsRestored
  }))

  const reconfigure = (request: ReconfigureRequest) =>
    Effect.gen(function* () {
      if (!isValidMembers(request.members)) {
        return yield* new InvalidRequestError({
          field: "members",
          reason: "need an odd number (2t+1) of distinct, non-empty replica ids"
        })
      }
      const engine = options.engine()
      if (!proposer.isServing || engine === undefined) {
        return yield* unavailable(`replica ${state.id} is not serving yet`)
      }
      const refs = yield* engine.proposeMembership(request.members).pipe(Effect.mapError((e) => unavailable(e.reason)))
      // Every engine's membership value, matched by its identity (this incarnation, engine, seq).
      const instances = yield* Effect.forEach(refs, (ref) => proposer.awaitMembership(ref))
      return ReconfigureResponse.fromPartial({ decidedInstance: Math.max(...instances) })
    })

  const service = grpcService(strictKvService, {
    ...operations,
    session: framedSession(kvSessionFrames, options.tracing ? answerInSession : { answer: answerInSession, shortcut }),
    state: () => stateResponse,
    reconfigure
  })
  return { service, stateResponse }
}
