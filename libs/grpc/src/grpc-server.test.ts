/**
 * serveGrpc and the Effect handler adapter on their own, with a test implementation of the Cluster service
 * definition: defects, client cancels, stream failures, graceful shutdown and bind errors.
 */

import { describe, expect, it } from "@effect/vitest"
import { credentials, makeGenericClientConstructor, status } from "@grpc/grpc-js"
import { UnavailableError } from "@reef/kernel"
import { ClusterClient, ClusterService, MemberState, type MembershipEvent, type PingReply } from "@reef/proto"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { service as healthService } from "grpc-health-check"
import { type GrpcServerError, serveGrpc } from "./grpc-server.js"
import { type EffectHandlers, grpcService } from "./handlers.js"
import { INTERNAL_DETAILS, REEF_ERROR_CODE_TRAILER } from "./status.js"

interface CallResult<A> {
  readonly code: status
  readonly details: string
  readonly value: A | undefined
  readonly reefCode: string | undefined
}

/** One unary call with a raw client, its outcome as data. */
const pingCall = (client: ClusterClient) =>
  Effect.async<CallResult<PingReply>>((resume) => {
    const call = client.ping({ target: undefined, relay: [], payload: "p" }, (error, value) =>
      resume(
        Effect.succeed({
          code: error?.code ?? status.OK,
          details: error?.details ?? "",
          value: error === null ? value : undefined,
          reefCode: error?.metadata.get(REEF_ERROR_CODE_TRAILER)[0] as string | undefined
        })
      )
    )
    return Effect.sync(() => call.cancel())
  })

const clientFor = (address: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new ClusterClient(address, credentials.createInsecure())),
    (client) => Effect.sync(() => client.close())
  )

const event = (id: string): MembershipEvent => ({
  member: { address: { cluster: "t", role: "r", id }, state: MemberState.MEMBER_STATE_JOINED, lastSeenMs: 0 },
  previous: MemberState.MEMBER_STATE_UNSPECIFIED
})

/** The Cluster service with `overrides`; a method a test does not call dies ("unused"), WatchMembership is empty. */
const clusterService = (overrides: Partial<EffectHandlers<typeof ClusterService, never>>) =>
  grpcService(ClusterService, {
    listActors: () => Effect.die("unused"),
    watchMembership: () => Stream.empty,
    ping: () => Effect.die("unused"),
    ...overrides
  })

describe("serveGrpc with Effect handlers", () => {
  it.scopedLive("a defect is INTERNAL without its message, and the server keeps serving", () =>
    Effect.gen(function* () {
      let calls = 0
      const server = yield* serveGrpc({
        services: [
          clusterService({
            ping: () =>
              ++calls === 1 ? Effect.die(new Error("secret bug")) : Effect.succeed({ hops: [], payload: "ok" })
          })
        ]
      })
      const client = yield* clientFor(server.address)
      const first = yield* pingCall(client)
      expect(first).toMatchObject({
        code: status.INTERNAL,
        details: INTERNAL_DETAILS,
        reefCode: "ERROR_CODE_HANDLER_FAILED"
      })
      const second = yield* pingCall(client)
      expect(second).toMatchObject({ code: status.OK, value: { hops: [], payload: "ok" } })
    })
  )

  it.scopedLive("a handler that throws instead of returning an Effect is a defect too", () =>
    Effect.gen(function* () {
      const server = yield* serveGrpc({
        services: [
          clusterService({
            ping: () => {
              throw new Error("not even an Effect")
            }
          })
        ]
      })
      const client = yield* clientFor(server.address)
      expect((yield* pingCall(client)).code).toBe(status.INTERNAL)
    })
  )

  it.scopedLive("a client cancel interrupts the handler", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const server = yield* serveGrpc({
        services: [
          clusterService({
            ping: () =>
              Deferred.succeed(started, undefined).pipe(
                Effect.zipRight(Effect.never),
                Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
              )
          })
        ]
      })
      const client = yield* clientFor(server.address)
      const call = yield* Effect.fork(pingCall(client))
      yield* Deferred.await(started)
      yield* Effect.fiberIdWith((id) => call.interruptAsFork(id)) // cancels the grpc-js call
      yield* Deferred.await(interrupted)
    })
  )

  it.scopedLive("a stream writes its elements, then ends with the mapped status of its failure", () =>
    Effect.gen(function* () {
      const server = yield* serveGrpc({
        services: [
          clusterService({
            watchMembership: () =>
              Stream.concat(
                Stream.make(event("a"), event("b")),
                Stream.fail(new UnavailableError({ subject: "reef.t.$presence.>", reason: "bus closed" }))
              ),
            ping: () => Effect.die("unused")
          })
        ]
      })
      const client = yield* clientFor(server.address)
      const outcome = yield* Effect.async<{ ids: Array<string>; code: status; details: string }>((resume) => {
        const ids: Array<string> = []
        const call = client.watchMembership({ role: "" })
        call.on("data", (e: MembershipEvent) => ids.push(e.member?.address?.id ?? ""))
        call.on("error", (error: { code: status; details: string }) =>
          resume(Effect.succeed({ ids, code: error.code, details: error.details }))
        )
      })
      expect(outcome).toEqual({
        ids: ["a", "b"],
        code: status.UNAVAILABLE,
        details: expect.stringContaining("bus closed")
      })
    })
  )

  it.live("shutdown lets a unary call in flight finish, and reports NOT_SERVING to health watchers", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const server = yield* serveGrpc({
        shutdownGraceMs: 30_000,
        services: [
          clusterService({
            watchMembership: () => Stream.never,
            ping: () =>
              Deferred.succeed(started, undefined).pipe(
                Effect.zipRight(Deferred.await(release)),
                Effect.as({ hops: [], payload: "finished" })
              )
          })
        ]
      }).pipe(Scope.extend(scope))

      const client = new ClusterClient(server.address, credentials.createInsecure())
      const Health = makeGenericClientConstructor(healthService as never, "Health")
      const health = new Health(server.address, credentials.createInsecure())
      const healthStatuses: Array<string> = []
      const notServing = yield* Deferred.make<void>()
      const healthWatch = health.Watch({ service: "reef.v1.Cluster" })
      healthWatch.on("data", (r: { status: string }) => {
        healthStatuses.push(r.status)
        if (r.status === "NOT_SERVING") Deferred.unsafeDone(notServing, Exit.void)
      })
      healthWatch.on("error", () => {})
      // An open WatchMembership stream must not hold shutdown back.
      const watch = client.watchMembership({ role: "" })
      const watchStatus = yield* Deferred.make<status>()
      watch.on("error", (e: { code: status }) => Deferred.unsafeDone(watchStatus, Exit.succeed(e.code)))
      watch.on("data", () => {})

      const inFlight = yield* Effect.fork(pingCall(client))
      yield* Deferred.await(started)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      expect(yield* Deferred.await(watchStatus)).toBe(status.UNAVAILABLE)
      yield* Deferred.succeed(release, undefined)
      const result = yield* inFlight.await.pipe(Effect.flatten)
      expect(result).toMatchObject({ code: status.OK, value: { payload: "finished" } })
      yield* Deferred.await(notServing)
      expect(healthStatuses).toEqual(["SERVING", "NOT_SERVING"])
      // The health watch is the last open call; once the client drops it, shutdown completes.
      healthWatch.cancel()
      yield* closing.await
      client.close()
      health.close()
    })
  )

  it.scopedLive("a port already in use is a GrpcServerError, not a defect", () =>
    Effect.gen(function* () {
      const services = [clusterService({})]
      const first = yield* serveGrpc({ services })
      const error: GrpcServerError = yield* Effect.flip(serveGrpc({ services, port: first.port }))
      expect(error._tag).toBe("GrpcServerError")
      expect(error.operation).toBe("bind")
      expect(error.message).toContain(`127.0.0.1:${first.port}`)
    })
  )
})
