/**
 * Expected failures of the kernel, as tagged errors in Effect's error channel. Defects (bugs) are not here.
 * Every error an asker can receive maps to one `reef.v1.ErrorCode`, so it can cross the wire as an ErrorDetail.
 */
import { ErrorCode, type ErrorDetail } from "@reef/proto"
import * as Data from "effect/Data"

/** The payload names a protobuf type the receiver has no codec for. */
export class UnknownTypeError extends Data.TaggedError("UnknownTypeError")<{
  readonly type: string
  readonly subject: string
}> {
  override get message() {
    return `unknown message type "${this.type}" on ${this.subject}`
  }
}

/** The bytes do not decode as the type they claim to be. */
export class MalformedMessageError extends Data.TaggedError("MalformedMessageError")<{
  readonly type: string
  readonly subject: string
  readonly cause: unknown
}> {
  override get message() {
    return `malformed ${this.type || "message"} on ${this.subject}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

/** A payload larger than the configured limit (checked on both send and receive). */
export class OversizedMessageError extends Data.TaggedError("OversizedMessageError")<{
  readonly type: string
  readonly sizeBytes: number
  readonly limitBytes: number
}> {
  override get message() {
    return `${this.type} payload of ${this.sizeBytes} bytes exceeds the ${this.limitBytes}-byte limit`
  }
}

/** No reply within the ask's deadline. The request may or may not have been handled. */
export class AskTimeoutError extends Data.TaggedError("AskTimeoutError")<{
  readonly subject: string
  readonly timeoutMs: number
}> {
  override get message() {
    return `no reply from ${this.subject} within ${this.timeoutMs} ms`
  }
}

/** Nobody is subscribed to the subject (NATS 503), or the connection is down. */
export class UnavailableError extends Data.TaggedError("UnavailableError")<{
  readonly subject: string
  readonly reason: string
}> {
  override get message() {
    return `${this.subject} unavailable: ${this.reason}`
  }
}

/** The actor answered with an error reply. */
export class RemoteError extends Data.TaggedError("RemoteError")<{
  readonly subject: string
  readonly detail: ErrorDetail
}> {
  override get message() {
    return `${this.detail.actor || this.subject} answered ${ErrorCode[this.detail.code]}: ${this.detail.message}`
  }
}

/** A failure reported by a handler. `code` lets a handler choose how the failure reaches the client. */
export class HandlerError extends Data.TaggedError("HandlerError")<{
  readonly code: ErrorCode
  readonly message: string
}> {}

/** An address or argument that the kernel refuses before sending anything. */
export class InvalidAddressError extends Data.TaggedError("InvalidAddressError")<{
  readonly reason: string
}> {
  override get message() {
    return this.reason
  }
}

/** The underlying transport failed (publish on a closed connection, subscription error). */
export class BusError extends Data.TaggedError("BusError")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message() {
    return `bus ${this.operation} failed: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

export type DecodeError = UnknownTypeError | MalformedMessageError | OversizedMessageError
export type SendError = OversizedMessageError | InvalidAddressError | BusError
export type AskError = SendError | AskTimeoutError | UnavailableError | RemoteError | DecodeError

/** The wire code of an error an asker may receive. */
export const errorCodeOf = (error: { readonly _tag: string; readonly code?: ErrorCode }): ErrorCode => {
  switch (error._tag) {
    case "UnknownTypeError":
      return ErrorCode.ERROR_CODE_UNKNOWN_TYPE
    case "MalformedMessageError":
      return ErrorCode.ERROR_CODE_MALFORMED
    case "OversizedMessageError":
      return ErrorCode.ERROR_CODE_OVERSIZED
    case "AskTimeoutError":
      return ErrorCode.ERROR_CODE_TIMEOUT
    case "UnavailableError":
      return ErrorCode.ERROR_CODE_UNAVAILABLE
    case "InvalidAddressError":
      return ErrorCode.ERROR_CODE_INVALID_ARGUMENT
    case "RemoteError":
      return (error as RemoteError).detail.code
    case "HandlerError":
      return error.code ?? ErrorCode.ERROR_CODE_HANDLER_FAILED
    default:
      return ErrorCode.ERROR_CODE_HANDLER_FAILED
  }
}
