/**
 * The KV client's session transport against a real gRPC server with stand-in operations (and the real
 * session answerer): requests in flight fail with UNAVAILABLE when the session breaks, the next call opens a
 * new session, and deadlines hold.
 */
import { describe, expect, it } from "@effect/vitest"
import { framedSession, GrpcCode, grpcService, serveGrpc } from "@reef/grpc"
import { KVService } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import { makeKvClient } from "./kv-client.js"
import { type KvOperations, kvSessionFrames, makeSessionAnswerer } from "./kv-session.js"

/** Set answers at once, except for the key "hang", which never is. */
const ops: KvOperations<never> = {
  get: () => Effect.die("unused"),
  set: (request) =>
    request.key === "hang" ? Effect.never : Effect.succeed({ instance: 1, version: request.value.length }),
  delete: () => Effect.die("unused"),
  compareAndSet: () => Effect.die("unused")
}

/** Request frames the test servers received. */
let framesReceived = 0
const countingFrames: typeof kvSessionFrames = {
  requests: (frame) => {
    framesReceived++
    return kvSessionFrames.requests(frame)
  },
  replies: kvSessionFrames.replies,
  replyBytes: kvSessionFrames.replyBytes
}

const serve = (port = 0) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const service = grpcService(KVService, {
      ...ops,
      state: () => Effect.die("unused"),
      reconfigure: () => Effect.die("unused"),
      session: framedSession(
        countingFrames,
        makeSessionAnswerer(ops, () => {})
      )
    })
    const server = yield* serveGrpc({ port, shutdownGraceMs: 100, services: [service] }).pipe(Scope.extend(scope))
    return { server, scope }
  })

describe("KV client sessions", () => {
  it.scopedLive("a broken session fails its requests with UNAVAILABLE; the next call opens a new one", () =>
    Effect.gen(function* () {
      const first = yield* serve()
      const client = yield* makeKvClient({ replicas: [first.server.address], timeoutMs: 10_000 })
      expect((yield* client.set("k", Buffer.from("abc"))).version).toBe(3)
      const hanging = yield* Effect.fork(Effect.flip(client.set("hang", Buffer.from("x"))))
      yield* Effect.sleep("100 millis")
      yield* Scope.close(first.scope, Exit.void)
      expect(yield* Fiber.join(hanging)).toMatchObject({ method: "Set", code: GrpcCode.UNAVAILABLE })
      const second = yield* serve(first.server.port)
      expect((yield* client.set("k", Buffer.from("abcd"))).version).toBe(4)
      yield* Scope.close(second.scope, Exit.void)
    })
  )

  it.scopedLive("requests issued together share frames and each gets its own reply", () =>
    Effect.gen(function* () {
      const { server, scope } = yield* serve()
      const client = yield* makeKvClient({ replicas: [server.address], timeoutMs: 10_000 })
      framesReceived = 0
      const versions = yield* Effect.forEach(
        Array.from({ length: 200 }, (_, i) => i + 1),
        (size) => Effect.map(client.set(`k${size}`, Buffer.alloc(size)), (r) => r.version),
        { concurrency: "unbounded" }
      )
      expect(versions).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
      // Issued in one turn of the event loop: far fewer frames than requests.
      expect(framesReceived).toBeLessThan(20)
      yield* Scope.close(scope, Exit.void)
    })
  )

  it.scopedLive("large requests issued together go in several frames, each under gRPC's 4 MiB limit", () =>
    Effect.gen(function* () {
      const { server, scope } = yield* serve()
      const client = yield* makeKvClient({ replicas: [server.address], timeoutMs: 10_000 })
      framesReceived = 0
      // 80 x 60 KiB: 4.8 MB issued in one turn.
      const versions = yield* Effect.forEach(
        Array.from({ length: 80 }, (_, i) => i),
        (i) => Effect.map(client.set(`big${i}`, Buffer.alloc(60 * 1024)), (r) => r.version),
        { concurrency: "unbounded" }
      )
      expect(versions).toEqual(Array.from({ length: 80 }, () => 60 * 1024))
      expect(framesReceived).toBeGreaterThanOrEqual(5)
      yield* Scope.close(scope, Exit.void)
    })
  )

  it.scopedLive("a request past its deadline fails with DEADLINE_EXCEEDED", () =>
    Effect.gen(function* () {
      const { server, scope } = yield* serve()
      const client = yield* makeKvClient({ replicas: [server.address], timeoutMs: 200 })
      expect(yield* Effect.flip(client.set("hang", Buffer.from("x")))).toMatchObject({
        method: "Set",
        code: GrpcCode.DEADLINE_EXCEEDED
      })
      yield* Scope.close(scope, Exit.void)
    })
  )
})
