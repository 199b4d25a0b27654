/**
 * Bidirectional sessions (session.ts `sessionHandler`) over a real grpc-js server and client, with a tiny
 * hand-written service whose messages are UTF-8 strings "<id>:<command>". What the server did with a call (saw
 * the half-close, ended the call, paused reading) is observed on the server's side of it, never guessed from
 * how long the client waited.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type ClientDuplexStream,
  credentials,
  makeGenericClientConstructor,
  type ServerDuplexStream,
  type ServiceError
} from "@grpc/grpc-js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Scope from "effect/Scope"
import { serveGrpc } from "./grpc-server.js"
import { type GrpcService, grpcService } from "./handlers.js"
import { framedSession, MAX_SESSION_FRAME_BYTES, type SessionFrames } from "./session.js"
import { GrpcCode } from "./status.js"

const utf8 = {
  serialize: (s: string) => Buffer.from(s),
  deserialize: (b: Buffer) => b.toString()
}
const EchoService = {
  session: {
    path: "/test.Echo/Session",
    requestStream: true,
    responseStream: true,
    requestSerialize: utf8.serialize,
    requestDeserialize: utf8.deserialize,
    responseSerialize: utf8.serialize,
    responseDeserialize: utf8.deserialize
  }
} as const

/** Frames of the framed Echo sessions: "|"-separated requests, and replies the same way. */
const pipeFrames: SessionFrames<string, string, string, string> = {
  requests: (frame) => frame.split("|"),
  replies: (replies) => replies.join("|"),
  /** With its "|" separator, so a frame's length is at most the sum of its replies' sizes. */
  replyBytes: (reply) => reply.length + 1
}

type EchoClient = { session(): ClientDuplexStream<string, string> } & { close(): void }
const EchoClient = makeGenericClientConstructor(EchoService, "test.Echo") as unknown as new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>
) => EchoClient

const openSession = (address: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const client = new EchoClient(address, credentials.createInsecure())
      const stream = client.session()
      const replies: Array<string> = []
      let ended = false
      let error: ServiceError | undefined
      stream.on("data", (reply: string) => replies.push(reply))
      stream.on("end", () => {
        ended = true
      })
      stream.on("error", (e: ServiceError) => {
        error = e
      })
      return { client, stream, replies, ended: () => ended, error: () => error }
    }),
    ({ client }) => Effect.sync(() => client.close())
  )

/** The server's side of one session call. */
interface ServerCall {
  readonly call: ServerDuplexStream<string, string>
  /** Done once the server's handler has taken the client's half-close (its own listener ran first). */
  readonly halfClosed: Deferred.Deferred<void>
  /** Whether the server has ended the call (OK or an error status). */
  readonly ended: () => boolean
}

/** `service` whose session calls are also handed to the test, to assert on what the server did with them. */
const observed = (service: GrpcService) => {
  const calls: Array<ServerCall> = []
  const observedService: GrpcService = {
    ...service,
    bind: (runner) => {
      const session = service.bind(runner).session as (call: ServerDuplexStream<string, string>) => void
      return {
        session: (call: ServerDuplexStream<string, string>) => {
          let ended = false
          const end = call.end.bind(call)
          call.end = ((...args: Parameters<typeof call.end>) => {
            ended = true
            return end(...args)
          }) as typeof call.end
          const emit = call.emit.bind(call)
          call.emit = ((event: string | symbol, ...args: Array<unknown>) => {
            if (event === "error") ended = true
            return emit(event, ...args)
          }) as typeof call.emit
          const halfClosed = Deferred.unsafeMake<void>(FiberId.none)
          session(call)
          call.once("end", () => Deferred.unsafeDone(halfClosed, Exit.void))
          calls.push({ call, halfClosed, ended: () => ended })
        }
      }
    }
  }
  return { service: observedService, calls }
}

const until = (condition: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500 && !condition(); i++) yield* Effect.sleep("10 millis")
    expect(condition()).toBe(true)
  })

describe("gRPC sessions (bidirectional methods)", () => {
  it.scopedLive("answers each request as soon as it is done, not in request order, and ends after half-close", () =>
    Effect.gen(function* () {
      const slowGate = yield* Deferred.make<void>()
      const echo = observed(
        grpcService(EchoService, {
          session: (request: string) => {
            const [id, command] = request.split(":")
            return command === "slow"
              ? Effect.as(Deferred.await(slowGate), `${id}:slow done`)
              : Effect.succeed(`${id}:${command} done`)
          }
        })
      )
      const server = yield* serveGrpc({ services: [echo.service] })
      const session = yield* openSession(server.address)
      session.stream.write("1:slow")
      session.stream.write("2:fast")
      yield* until(() => session.replies.length === 1)
      expect(session.replies).toEqual(["2:fast done"])
      session.stream.end()
      // Half-closed with a request in flight: the server has taken the half-close and waits for the reply.
      yield* Deferred.await(echo.calls[0]!.halfClosed)
      expect(echo.calls[0]!.ended()).toBe(false)
      yield* Deferred.succeed(slowGate, undefined)
      yield* until(() => session.ended())
      expect(session.replies).toEqual(["2:fast done", "1:slow done"])
      expect(session.error()).toBeUndefined()
    })
  )

  it.scopedLive(
    "a shortcut takes requests without a fiber, answers once, and the call still ends after its replies",
    () =>
      Effect.gen(function* () {
        /** Replies the shortcut still owes, by request id. */
        const owed = new Map<string, (response: string) => void>()
        const echo = observed(
          grpcService(EchoService, {
            session: {
              answer: (request: string) => Effect.succeed(`${request} by fiber`),
              shortcut: (request, reply) => {
                const [id, command] = request.split(":")
                if (command === "now") {
                  reply(`${id}:now by shortcut`)
                  reply(`${id}:now twice`)
                  return true
                }
                if (command !== "later") return false
                owed.set(id!, reply)
                return true
              }
            }
          })
        )
        const server = yield* serveGrpc({ services: [echo.service] })
        const session = yield* openSession(server.address)
        session.stream.write("1:later")
        session.stream.write("2:now")
        session.stream.write("3:other")
        yield* until(() => session.replies.length === 2)
        expect([...session.replies].sort()).toEqual(["2:now by shortcut", "3:other by fiber"])
        session.stream.end()
        // Half-closed while the shortcut still owes a reply: the call stays open for it.
        yield* Deferred.await(echo.calls[0]!.halfClosed)
        expect(echo.calls[0]!.ended()).toBe(false)
        owed.get("1")!("1:later by shortcut")
        yield* until(() => session.ended())
        expect(session.replies).toHaveLength(3)
        expect(session.replies[2]).toBe("1:later by shortcut")
        expect(session.error()).toBeUndefined()
      })
  )

  it.scopedLive(
    "a framed session takes several requests per message and answers what completed in one turn as one message",
    () =>
      Effect.gen(function* () {
        const slowGate = yield* Deferred.make<void>()
        const echo = observed(
          grpcService(EchoService, {
            session: framedSession(pipeFrames, {
              answer: (request: string) =>
                request.endsWith(":slow")
                  ? Effect.as(Deferred.await(slowGate), `${request} by fiber`)
                  : Effect.succeed(`${request} by fiber`),
              shortcut: (request: string, reply: (response: string) => void) => {
                if (!request.endsWith(":now")) return false
                reply(`${request} by shortcut`)
                return true
              }
            })
          })
        )
        const server = yield* serveGrpc({ services: [echo.service] })
        const session = yield* openSession(server.address)
        session.stream.write("1:now|2:now|3:other|4:slow")
        const early = () => session.replies.flatMap((frame) => frame.split("|"))
        yield* until(() => early().length === 3)
        // The shortcut's replies came in the same turn, and the fiber's in it or the next: at most two frames.
        expect(early().sort()).toEqual(["1:now by shortcut", "2:now by shortcut", "3:other by fiber"])
        expect(session.replies.length).toBeLessThanOrEqual(2)
        expect(session.replies[0]!.startsWith("1:now by shortcut|2:now by shortcut")).toBe(true)
        session.stream.end()
        yield* Deferred.await(echo.calls[0]!.halfClosed)
        expect(echo.calls[0]!.ended()).toBe(false)
        yield* Deferred.succeed(slowGate, undefined)
        yield* until(() => session.ended())
        expect(session.replies.at(-1)).toBe("4:slow by fiber")
        expect(session.error()).toBeUndefined()
      })
  )

  it.scopedLive("a framed session sends a reply frame early rather than let it grow past MAX_SESSION_FRAME_BYTES", () =>
    Effect.gen(function* () {
      const server = yield* serveGrpc({
        services: [
          grpcService(EchoService, {
            session: framedSession(pipeFrames, (request: string) =>
              Effect.succeed(`${request}:${"x".repeat(MAX_SESSION_FRAME_BYTES / 4)}`)
            )
          })
        ]
      })
      const session = yield* openSession(server.address)
      // Five replies of a little over a quarter of the bound each, completed in one turn: three fit in a frame.
      session.stream.write("1|2|3|4|5")
      yield* until(() => session.replies.flatMap((frame) => frame.split("|")).length === 5)
      expect(session.replies.map((frame) => frame.split("|").length)).toEqual([3, 2])
      for (const frame of session.replies) expect(frame.length).toBeLessThanOrEqual(MAX_SESSION_FRAME_BYTES)
    })
  )

  it.scopedLive("a request that dies goes unanswered and is logged; the session goes on", () =>
    Effect.gen(function* () {
      const server = yield* serveGrpc({
        services: [
          grpcService(EchoService, {
            session: (request: string) =>
              request.endsWith(":die") ? Effect.die(new Error("bug")) : Effect.succeed(`${request} done`)
          })
        ]
      })
      const session = yield* openSession(server.address)
      session.stream.write("1:die")
      session.stream.write("2:ok")
      yield* until(() => session.replies.length === 1)
      expect(session.replies).toEqual(["2:ok done"])
      expect(session.error()).toBeUndefined()
    })
  )

  it.scopedLive("a client cancel interrupts the requests in flight", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const server = yield* serveGrpc({
        services: [
          grpcService(EchoService, {
            session: () =>
              Deferred.succeed(started, undefined).pipe(
                Effect.zipRight(Effect.never),
                Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
              )
          })
        ]
      })
      const session = yield* openSession(server.address)
      session.stream.write("1:forever")
      yield* Deferred.await(started)
      session.stream.cancel()
      yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
    })
  )

  it.live("at server shutdown a session answers its requests in flight, then ends with UNAVAILABLE", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const echo = observed(
        grpcService(EchoService, {
          session: (request: string) =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Deferred.await(gate)),
              Effect.as(`${request} done`)
            )
        })
      )
      const server = yield* serveGrpc({ services: [echo.service] }).pipe(Scope.extend(scope))
      const session = yield* openSession(server.address).pipe(Scope.extend(scope))
      session.stream.write("1:pending")
      yield* Deferred.await(started)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      // Shutdown has reached the session: it stops reading requests, and still owes the pending one its reply.
      yield* until(() => echo.calls[0]!.call.isPaused())
      expect(echo.calls[0]!.ended()).toBe(false)
      yield* Deferred.succeed(gate, undefined)
      yield* until(() => session.error() !== undefined)
      expect(session.replies).toEqual(["1:pending done"])
      expect(session.error()?.code).toBe(GrpcCode.UNAVAILABLE)
      yield* Fiber.join(closing)
    })
  )
})
