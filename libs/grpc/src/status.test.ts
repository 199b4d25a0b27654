import { describe, expect, it } from "@effect/vitest"
import { status } from "@grpc/grpc-js"
import {
  AskTimeoutError,
  BusError,
  HandlerError,
  InvalidAddressError,
  MalformedMessageError,
  OversizedMessageError,
  RemoteError,
  UnavailableError,
  UnknownTypeError
} from "@reef/kernel"
import { ErrorCode } from "@reef/proto"
import * as Cause from "effect/Cause"
import * as FiberId from "effect/FiberId"
import { InvalidRequestError } from "./errors.js"
import { grpcCodeOf, INTERNAL_DETAILS, SHUTTING_DOWN_DETAILS, statusOfCause, statusOfFailure } from "./status.js"

describe("grpcCodeOf: every reef.v1.ErrorCode has one gRPC status", () => {
  it.each([
    [ErrorCode.ERROR_CODE_UNSPECIFIED, status.UNKNOWN],
    [ErrorCode.ERROR_CODE_UNKNOWN_TYPE, status.INTERNAL],
    [ErrorCode.ERROR_CODE_MALFORMED, status.INTERNAL],
    [ErrorCode.ERROR_CODE_OVERSIZED, status.RESOURCE_EXHAUSTED],
    [ErrorCode.ERROR_CODE_HANDLER_FAILED, status.INTERNAL],
    [ErrorCode.ERROR_CODE_TIMEOUT, status.DEADLINE_EXCEEDED],
    [ErrorCode.ERROR_CODE_UNAVAILABLE, status.UNAVAILABLE],
    [ErrorCode.ERROR_CODE_INVALID_ARGUMENT, status.INVALID_ARGUMENT],
    [ErrorCode.ERROR_CODE_NOT_FOUND, status.NOT_FOUND],
    [ErrorCode.ERROR_CODE_OVERLOADED, status.RESOURCE_EXHAUSTED],
    [ErrorCode.ERROR_CODE_STOPPED, status.UNAVAILABLE],
    [ErrorCode.ERROR_CODE_CONFLICT, status.ABORTED],
    [ErrorCode.ERROR_CODE_MOVING, status.UNAVAILABLE]
  ])("%s → %s", (code, expected) => {
    expect(grpcCodeOf(code)).toBe(expected)
  })

  it("covers the whole enum", () => {
    const codes = Object.values(ErrorCode).filter((v): v is ErrorCode => typeof v === "number" && v >= 0)
    expect(codes).toHaveLength(13)
  })
})

describe("statusOfFailure: kernel and edge errors, with the error's message as detail", () => {
  const subject = "reef.test.counter.c1"
  it.each([
    [new AskTimeoutError({ subject, timeoutMs: 100 }), status.DEADLINE_EXCEEDED, ErrorCode.ERROR_CODE_TIMEOUT],
    [new UnavailableError({ subject, reason: "no responders" }), status.UNAVAILABLE, ErrorCode.ERROR_CODE_UNAVAILABLE],
    [new InvalidAddressError({ reason: "bad id" }), status.INVALID_ARGUMENT, ErrorCode.ERROR_CODE_INVALID_ARGUMENT],
    [
      new OversizedMessageError({ type: "reef.v1.PingRequest", sizeBytes: 2, limitBytes: 1 }),
      status.RESOURCE_EXHAUSTED,
      ErrorCode.ERROR_CODE_OVERSIZED
    ],
    [new UnknownTypeError({ type: "x.Y", subject }), status.INTERNAL, ErrorCode.ERROR_CODE_UNKNOWN_TYPE],
    [
      new MalformedMessageError({ type: "x.Y", subject, cause: "eof" }),
      status.INTERNAL,
      ErrorCode.ERROR_CODE_MALFORMED
    ],
    [new BusError({ operation: "publish", cause: "closed" }), status.INTERNAL, ErrorCode.ERROR_CODE_HANDLER_FAILED],
    [
      new HandlerError({ code: ErrorCode.ERROR_CODE_NOT_FOUND, message: "no such key" }),
      status.NOT_FOUND,
      ErrorCode.ERROR_CODE_NOT_FOUND
    ],
    [
      new InvalidRequestError({ field: "role", reason: "bad" }),
      status.INVALID_ARGUMENT,
      ErrorCode.ERROR_CODE_INVALID_ARGUMENT
    ]
  ])("%s", (error, code, reefCode) => {
    expect(statusOfFailure(error)).toEqual({ code, details: error.message, reefCode })
  })

  it("an actor's error reply keeps the actor's code and message", () => {
    const error = new RemoteError({
      subject,
      detail: {
        code: ErrorCode.ERROR_CODE_STOPPED,
        message: "gave up after 5 crashes",
        requestType: "",
        actor: "counter/c1"
      }
    })
    const result = statusOfFailure(error)
    expect(result.code).toBe(status.UNAVAILABLE)
    expect(result.reefCode).toBe(ErrorCode.ERROR_CODE_STOPPED)
    expect(result.details).toContain("gave up after 5 crashes")
    expect(result.details).toContain("counter/c1")
  })

  it("an actor's CONFLICT is ABORTED", () => {
    const detail = { code: ErrorCode.ERROR_CODE_CONFLICT, message: "version moved", requestType: "", actor: "kv/r1" }
    expect(statusOfFailure(new RemoteError({ subject, detail })).code).toBe(status.ABORTED)
  })
})

describe("statusOfCause", () => {
  it("a failure wins over everything else in the cause", () => {
    const cause = Cause.sequential(Cause.fail(new AskTimeoutError({ subject: "s", timeoutMs: 1 })), Cause.die("boom"))
    expect(statusOfCause(cause).code).toBe(status.DEADLINE_EXCEEDED)
  })

  it("a defect is INTERNAL and its message stays in the server", () => {
    const result = statusOfCause(Cause.die(new Error("secret stack detail")))
    expect(result).toEqual({
      code: status.INTERNAL,
      details: INTERNAL_DETAILS,
      reefCode: ErrorCode.ERROR_CODE_HANDLER_FAILED
    })
  })

  it("an interruption the client did not ask for means the server is shutting down", () => {
    expect(statusOfCause(Cause.interrupt(FiberId.none))).toMatchObject({
      code: status.UNAVAILABLE,
      details: SHUTTING_DOWN_DETAILS
    })
  })
})
