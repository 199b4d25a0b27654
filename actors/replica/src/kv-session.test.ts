/** The per-request answerer of reef.v1.KV/Session: dispatch by op, and failures as the reply's error. */
import { GrpcCode, InvalidRequestError } from "@reef/grpc"
import { HandlerError } from "@reef/kernel"
import { ErrorCode, type KvRequest } from "@reef/proto"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { type KvCallbacks, type KvOperations, makeSessionAnswerer, makeSessionShortcut } from "./kv-session.js"

const ops: KvOperations<never> = {
  get: (r) => Effect.succeed({ found: true, value: Buffer.from(r.key), instance: 7, version: 1 }),
  set: (r) =>
    r.key === "busy"
      ? Effect.fail(new HandlerError({ code: ErrorCode.ERROR_CODE_OVERLOADED, message: "pending buffer full" }))
      : Effect.succeed({ instance: 8, version: 2 }),
  delete: (r) =>
    r.key === ""
      ? Effect.fail(new InvalidRequestError({ field: "key", reason: "must not be empty" }))
      : Effect.die("bug"),
  compareAndSet: () => Effect.succeed({ swapped: true, current: Buffer.alloc(0), currentFound: false, instance: 9 })
}

const answer = (request: Partial<KvRequest>) => {
  const defects: Array<string> = []
  const answerer = makeSessionAnswerer(ops, (message) => defects.push(message))
  const reply = Effect.runSync(answerer({ id: 42, traceparent: "", op: undefined, ...request }))
  return { reply, defects }
}

describe("KV session requests", () => {
  it("answers each op with its own result case under the request's id", () => {
    expect(answer({ op: { $case: "get", value: { key: "k" } } }).reply).toMatchObject({
      id: 42,
      result: { $case: "get", value: { found: true, instance: 7 } }
    })
    expect(answer({ op: { $case: "set", value: { key: "k", value: Buffer.from("v") } } }).reply.result).toEqual({
      $case: "set",
      value: { instance: 8, version: 2 }
    })
  })

  it("a failure is the reply's error with the unary call's status: INVALID_ARGUMENT, RESOURCE_EXHAUSTED", () => {
    expect(answer({ op: { $case: "delete", value: { key: "" } } }).reply.result).toEqual({
      $case: "error",
      value: {
        grpcCode: GrpcCode.INVALID_ARGUMENT,
        code: ErrorCode.ERROR_CODE_INVALID_ARGUMENT,
        message: expect.stringContaining("key")
      }
    })
    expect(answer({ op: { $case: "set", value: { key: "busy", value: Buffer.alloc(0) } } }).reply.result).toEqual({
      $case: "error",
      value: {
        grpcCode: GrpcCode.RESOURCE_EXHAUSTED,
        code: ErrorCode.ERROR_CODE_OVERLOADED,
        message: "pending buffer full"
      }
    })
  })

  it("a request without an op is INVALID_ARGUMENT; a defect is INTERNAL and logged", () => {
    expect(answer({}).reply.result).toMatchObject({ $case: "error", value: { grpcCode: GrpcCode.INVALID_ARGUMENT } })
    const died = answer({ op: { $case: "delete", value: { key: "k" } } })
    expect(died.reply.result).toMatchObject({ $case: "error", value: { grpcCode: GrpcCode.INTERNAL } })
    expect(died.defects).toHaveLength(1)
  })

  it("the shortcut answers like the Effect path, declines what it leaves to it, and words failures the same", () => {
    const callbacks: KvCallbacks = {
      get: (r, done) => {
        if (r.key === "") return false
        done({ found: true, value: Buffer.from(r.key), instance: 7, version: 1 })
        return true
      },
      set: (r, done) => {
        done(
          r.key === "busy"
            ? new HandlerError({ code: ErrorCode.ERROR_CODE_OVERLOADED, message: "pending buffer full" })
            : { instance: 8, version: 2 }
        )
        return true
      },
      delete: () => false,
      compareAndSet: () => false
    }
    const shortcut = makeSessionShortcut(callbacks)
    const viaShortcut = (request: Partial<KvRequest>) => {
      const replies: Array<unknown> = []
      const taken = shortcut({ id: 42, traceparent: "", op: undefined, ...request }, (reply) => replies.push(reply))
      return { taken, replies }
    }
    for (const op of [
      { $case: "get", value: { key: "k" } },
      { $case: "set", value: { key: "k", value: Buffer.from("v") } },
      { $case: "set", value: { key: "busy", value: Buffer.alloc(0) } }
    ] as const) {
      expect(viaShortcut({ op })).toEqual({ taken: true, replies: [answer({ op }).reply] })
    }
    expect(viaShortcut({ op: { $case: "get", value: { key: "" } } })).toEqual({ taken: false, replies: [] })
    expect(viaShortcut({ op: { $case: "delete", value: { key: "k" } } })).toEqual({ taken: false, replies: [] })
    expect(viaShortcut({})).toEqual({ taken: false, replies: [] })
  })
})
