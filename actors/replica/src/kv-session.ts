/**
 * One request of a reef.v1.KV/Session stream: dispatched to the same handler as the unary method, answered
 * under the request's id. A request never ends the session: a failure (bad argument, overload, unavailable
 * engine, even a defect) becomes that reply's `error`, with the status the unary call would have ended with.
 */
import {
  GrpcCode,
  type SessionFrames,
  type SessionShortcut,
  statusOfCause,
  statusOfFailure,
  type TaggedFailure,
  withServerSpan
} from "@reef/grpc"
import {
  type CompareAndSetRequest,
  type CompareAndSetResponse,
  type DeleteRequest,
  type DeleteResponse,
  ErrorCode,
  type GetRequest,
  type GetResponse,
  type KvReplies,
  KvReply,
  type KvRequest,
  type KvRequests,
  type SetRequest,
  type SetResponse
} from "@reef/proto"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"

export interface KvOperations<R> {
  readonly get: (request: GetRequest) => Effect.Effect<GetResponse, TaggedFailure, R>
  readonly set: (request: SetRequest) => Effect.Effect<SetResponse, TaggedFailure, R>
  readonly delete: (request: DeleteRequest) => Effect.Effect<DeleteResponse, TaggedFailure, R>
  readonly compareAndSet: (request: CompareAndSetRequest) => Effect.Effect<CompareAndSetResponse, TaggedFailure, R>
}

const METHOD = "reef.v1.KV"

/** reef.v1.KV/Session's frames: requests in a KvRequests, replies in a KvReplies. */
export const kvSessionFrames: SessionFrames<KvRequests, KvReplies, KvRequest, KvReply> = {
  requests: (frame) => frame.requests,
  replies: (replies) => ({ replies }),
  replyBytes: (reply) => {
    const result = reply.result
    switch (result?.$case) {
      case "get":
        return 32 + result.value.value.length
      case "compareAndSet":
        return 32 + result.value.current.length
      case "error":
        return 32 + result.value.message.length
      default:
        return 32
    }
  }
}

type Result = NonNullable<KvReply["result"]>

const dispatch = <R>(ops: KvOperations<R>, request: KvRequest): [string, Effect.Effect<Result, TaggedFailure, R>] => {
  const op = request.op
  switch (op?.$case) {
    case "get":
      return ["Get", Effect.map(ops.get(op.value), (value) => ({ $case: "get", value }))]
    case "set":
      return ["Set", Effect.map(ops.set(op.value), (value) => ({ $case: "set", value }))]
    case "delete":
      return ["Delete", Effect.map(ops.delete(op.value), (value) => ({ $case: "delete", value }))]
    case "compareAndSet":
      return ["CompareAndSet", Effect.map(ops.compareAndSet(op.value), (value) => ({ $case: "compareAndSet", value }))]
    case undefined:
      return [
        "Unknown",
        Effect.succeed(errorResult(GrpcCode.INVALID_ARGUMENT, ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "op: must be set"))
      ]
  }
}

const errorResult = (grpcCode: number, code: ErrorCode, message: string): Result => ({
  $case: "error",
  value: { grpcCode, code, message }
})

/**
 * `(request) => reply` for a session. `logDefect` is told about defects (bugs), which the client sees as
 * INTERNAL like a unary call's.
 */
export const makeSessionAnswerer =
  <R>(ops: KvOperations<R>, logDefect: (message: string, cause: Cause.Cause<unknown>) => void) =>
  (request: KvRequest): Effect.Effect<KvReply, never, R> => {
    const [method, answer] = dispatch(ops, request)
    const traced = withServerSpan(`${METHOD}/${method}`, request.traceparent || undefined, answer)
    return Effect.matchCause(traced, {
      onSuccess: (result) => KvReply.fromPartial({ id: request.id, result }),
      onFailure: (cause) => {
        if (Cause.isDie(cause)) logDefect(`KV session ${method} (request ${request.id}) died`, cause)
        const status = statusOfCause(cause)
        return KvReply.fromPartial({
          id: request.id,
          result: errorResult(status.code, status.reefCode, status.details)
        })
      }
    })
  }

/**
 * Callback forms of the KV operations, for the session shortcut (@reef/grpc `SessionShortcut`): each calls `done`
 * once with the response or the failure, or returns false to leave the request to the Effect operation (an
 * invalid argument, say, which the Effect operation words and traces like any other failure).
 */
export interface KvCallbacks {
  readonly get: (request: GetRequest, done: (outcome: GetResponse | TaggedFailure) => void) => boolean
  readonly set: (request: SetRequest, done: (outcome: SetResponse | TaggedFailure) => void) => boolean
  readonly delete: (request: DeleteRequest, done: (outcome: DeleteResponse | TaggedFailure) => void) => boolean
  readonly compareAndSet: (
    request: CompareAndSetRequest,
    done: (outcome: CompareAndSetResponse | TaggedFailure) => void
  ) => boolean
}

const isFailure = (outcome: object): outcome is TaggedFailure => "_tag" in outcome

type KvResponse = GetResponse | SetResponse | DeleteResponse | CompareAndSetResponse

/** A session request answered through `ops` without a fiber; the reply is what the Effect path would send. */
export const makeSessionShortcut =
  (ops: KvCallbacks): SessionShortcut<KvRequest, KvReply> =>
  (request, reply) => {
    const op = request.op
    if (op === undefined) return false
    const done = (outcome: KvResponse | TaggedFailure) => {
      if (isFailure(outcome)) {
        const status = statusOfFailure(outcome)
        return reply({ id: request.id, result: errorResult(status.code, status.reefCode, status.details) })
      }
      // A reply's result case is named like the request's op case, and each op's callback answers with its own
      // response type (KvCallbacks).
      reply({ id: request.id, result: { $case: op.$case, value: outcome } as Result })
    }
    switch (op.$case) {
      case "get":
        return ops.get(op.value, done)
      case "set":
        return ops.set(op.value, done)
      case "delete":
        return ops.delete(op.value, done)
      case "compareAndSet":
        return ops.compareAndSet(op.value, done)
    }
  }
