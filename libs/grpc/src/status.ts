/**
 * The ONE place where Reef failures become gRPC status codes (style §6: status codes only at the edge).
 * Actors and the kernel speak `reef.v1.ErrorCode`, a closed set; a gRPC server translates each failure it sees
 * (a kernel tagged error, an actor's ErrorDetail inside RemoteError, an InvalidRequestError, a defect or an
 * interruption) into a status code plus a detail message. Pure: no I/O, no grpc-js objects beyond the enum.
 */
import { status } from "@grpc/grpc-js"

/**
 * gRPC status codes by name (grpc-js's `status` enum, so they compare with a `ServiceError`'s code): write
 * `GrpcCode.UNAVAILABLE`, never `14`.
 */
export { status as GrpcCode } from "@grpc/grpc-js"

import { errorCodeOf } from "@reef/kernel"
import { ErrorCode } from "@reef/proto"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"

/** What a failed call ends with. `reefCode` also travels as the `reef-error-code` trailer. */
export interface GrpcStatus {
  readonly code: status
  readonly details: string
  readonly reefCode: ErrorCode
}

/** Any tagged failure: kernel errors, InvalidRequestError, HandlerError-like errors with a `code`. */
export interface TaggedFailure {
  readonly _tag: string
  readonly message: string
  readonly code?: ErrorCode
}

export { REEF_ERROR_CODE_TRAILER } from "./trailer.js"

/**
 * The gRPC status of a Reef error code. `OVERSIZED` is RESOURCE_EXHAUSTED (a message between actors exceeded
 * the bus limit); a client-sent argument that is too large is refused earlier as INVALID_ARGUMENT.
 */
export const grpcCodeOf = (code: ErrorCode): status => {
  switch (code) {
    case ErrorCode.ERROR_CODE_INVALID_ARGUMENT:
      return status.INVALID_ARGUMENT
    case ErrorCode.ERROR_CODE_TIMEOUT:
      return status.DEADLINE_EXCEEDED
    case ErrorCode.ERROR_CODE_UNAVAILABLE:
    case ErrorCode.ERROR_CODE_MOVING:
      return status.UNAVAILABLE
    case ErrorCode.ERROR_CODE_NOT_FOUND:
      return status.NOT_FOUND
    case ErrorCode.ERROR_CODE_OVERLOADED:
    case ErrorCode.ERROR_CODE_OVERSIZED:
      return status.RESOURCE_EXHAUSTED
    // A stopped actor will not answer again until restarted: the client may retry elsewhere or later.
    case ErrorCode.ERROR_CODE_STOPPED:
      return status.UNAVAILABLE
    case ErrorCode.ERROR_CODE_CONFLICT:
      return status.ABORTED
    // Undecodable or unknown messages between a server and an actor are a bug or version skew, not the client's fault.
    case ErrorCode.ERROR_CODE_UNKNOWN_TYPE:
    case ErrorCode.ERROR_CODE_MALFORMED:
    case ErrorCode.ERROR_CODE_HANDLER_FAILED:
      return status.INTERNAL
    default:
      return status.UNKNOWN
  }
}

/** The Reef error code of a tagged failure: the edge's own errors first, then the kernel's mapping. */
export const reefCodeOf = (error: TaggedFailure): ErrorCode =>
  error._tag === "InvalidRequestError" ? ErrorCode.ERROR_CODE_INVALID_ARGUMENT : errorCodeOf(error)

/** The status a call ends with when its handler fails with `error`. */
export const statusOfFailure = (error: TaggedFailure): GrpcStatus => {
  const reefCode = reefCodeOf(error)
  return { code: grpcCodeOf(reefCode), details: error.message || error._tag, reefCode }
}

/** Detail sent for a defect: the cause goes to the server's log, never to the client. */
export const INTERNAL_DETAILS = "internal error in the server (logged)"
/** Detail sent when the server interrupts a call because it is shutting down. */
export const SHUTTING_DOWN_DETAILS = "the server is shutting down"

/**
 * The status of a failed handler's cause: its first expected failure if any; else a defect is INTERNAL; else
 * it was interrupted, which (when the client did not cancel) means the server is shutting down: UNAVAILABLE.
 */
export const statusOfCause = <E extends TaggedFailure>(cause: Cause.Cause<E>): GrpcStatus =>
  Option.match(Cause.failureOption(cause), {
    onSome: statusOfFailure,
    onNone: () =>
      Cause.isDie(cause)
        ? { code: status.INTERNAL, details: INTERNAL_DETAILS, reefCode: ErrorCode.ERROR_CODE_HANDLER_FAILED }
        : { code: status.UNAVAILABLE, details: SHUTTING_DOWN_DETAILS, reefCode: ErrorCode.ERROR_CODE_UNAVAILABLE }
  })
