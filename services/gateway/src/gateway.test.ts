/**
 * The gateway end to end: a real grpc-js server on a free port over the in-memory kernel with real counter
 * actors, called by real grpc-js clients (the package's own client helpers, the health client and a
 * reflection client). No timing thresholds: waits are on membership conditions.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { credentials, loadPackageDefinition, Metadata, makeGenericClientConstructor, status } from "@grpc/grpc-js"
import { loadSync } from "@grpc/proto-loader"
import { GrpcCode, SHUTTING_DOWN_DETAILS } from "@reef/grpc"
import { counterActor, isJoined, Membership, memoryKernelLayer, spawn } from "@reef/kernel"
import { ObservabilityTest, TestSpans } from "@reef/observability"
import { ClusterClient, type Member, MemberState, type MembershipEvent } from "@reef/proto"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { service as healthService } from "grpc-health-check"
import { type GatewayCallError, listActors, ping } from "./client.js"
import { runGateway } from "./gateway.js"
import { watchMembership } from "./watch.js"

const CLUSTER = "test"
const kernel = memoryKernelLayer({ cluster: CLUSTER })

const joined = (ids: ReadonlyArray<string>) => (members: ReadonlyArray<Member>) =>
  ids.every((id) => members.some((m) => isJoined(m) && m.address?.id === id))

/** Two counters (c1 in its own scope, so a test can stop it), both joined, and the gateway on a free port. */
const cluster = Effect.gen(function* () {
  const c1Scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  yield* spawn(counterActor, "c1").pipe(Scope.extend(c1Scope))
  yield* spawn(counterActor, "c2")
  yield* Effect.flatMap(Membership, (m) => m.awaitMembers(joined(["c1", "c2"])))
  const gateway = yield* runGateway({ port: 0, id: "gw1" })
  yield* Effect.flatMap(Membership, (m) => m.awaitMembers(joined(["gw1"])))
  return { address: gateway.address, port: gateway.port, stopC1: Scope.close(c1Scope, Exit.void) }
})

const withCluster = <A, E>(
  test: (c: Effect.Effect.Success<typeof cluster>) => Effect.Effect<A, E, Membership | TestSpans>
) => Effect.flatMap(cluster, test).pipe(Effect.scoped, Effect.provide(Layer.merge(kernel, ObservabilityTest)))

const callError = <A>(effect: Effect.Effect<A, GatewayCallError>) => Effect.flip(effect)

const ids = (members: ReadonlyArray<Member>) => members.map((m) => `${m.address?.role}/${m.address?.id}`)

describe("reef.v1.Cluster/ListActors", () => {
  it.live("lists every joined actor, the gateway included, sorted by role/id", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const members = yield* listActors(address)
        expect(ids(members)).toEqual(["counter/c1", "counter/c2", "gateway/gw1"])
        expect(members.every((m) => m.state === MemberState.MEMBER_STATE_JOINED)).toBe(true)
        expect(members[0]?.lastHeartbeat?.pid).toBe(process.pid)
      })
    )
  )

  it.live("filters by role", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        expect(ids(yield* listActors(address, "counter"))).toEqual(["counter/c1", "counter/c2"])
        expect(yield* listActors(address, "nobody")).toEqual([])
      })
    )
  )

  it.live("refuses an invalid role with INVALID_ARGUMENT and a message", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        for (const role of ["counter.c1", "count*", ">", "a b"]) {
          const error = yield* callError(listActors(address, role))
          expect(error.code).toBe(status.INVALID_ARGUMENT)
          expect(error.details).toContain("not a role name")
          expect(error.reefCode).toBe("ERROR_CODE_INVALID_ARGUMENT")
        }
      })
    )
  )

  it.live("includes a stopped actor only with includeLeft", () =>
    withCluster(({ address, stopC1 }) =>
      Effect.gen(function* () {
        yield* stopC1
        yield* Effect.flatMap(Membership, (m) =>
          m.awaitMembers((ms) => ms.some((x) => x.address?.id === "c1" && x.state === MemberState.MEMBER_STATE_LEFT))
        )
        expect(ids(yield* listActors(address, "counter"))).toEqual(["counter/c2"])
        expect(ids(yield* listActors(address, "counter", { includeLeft: true }))).toEqual(["counter/c1", "counter/c2"])
      })
    )
  )
})

describe("reef.v1.Cluster/WatchMembership", () => {
  it.live("streams the current members, then the change when an actor stops", () =>
    withCluster(({ address, stopC1 }) =>
      Effect.gen(function* () {
        const events = yield* watchMembership(address, "counter").pipe(
          Stream.tap((event) =>
            // Once both current members arrived, stop c1: its leaving heartbeat is the next event.
            event.member?.address?.id === "c2" && event.previous === MemberState.MEMBER_STATE_UNSPECIFIED
              ? stopC1
              : Effect.void
          ),
          Stream.takeUntil((event) => event.member?.state === MemberState.MEMBER_STATE_LEFT),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray)
        )
        const summary = (e: MembershipEvent) => [e.member?.address?.id, e.member?.state, e.previous]
        expect(events.slice(0, 2).map(summary).sort()).toEqual([
          ["c1", MemberState.MEMBER_STATE_JOINED, MemberState.MEMBER_STATE_UNSPECIFIED],
          ["c2", MemberState.MEMBER_STATE_JOINED, MemberState.MEMBER_STATE_UNSPECIFIED]
        ])
        expect(summary(events[events.length - 1]!)).toEqual([
          "c1",
          MemberState.MEMBER_STATE_LEFT,
          MemberState.MEMBER_STATE_JOINED
        ])
      })
    )
  )

  it.live("refuses an invalid role with INVALID_ARGUMENT", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(Stream.runDrain(watchMembership(address, "a.b")))
        expect(error.code).toBe(status.INVALID_ARGUMENT)
        expect(error.details).toContain("not a role name")
      })
    )
  )
})

describe("reef.v1.Cluster/Ping", () => {
  const c1 = { cluster: CLUSTER, role: "counter", id: "c1" }
  const c2 = { cluster: CLUSTER, role: "counter", id: "c2" }

  it.live("asks the target, which relays to the next actor: both hops come back", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const reply = yield* ping(address, { target: c1, relay: [c2], payload: "hello" })
        expect(reply.payload).toBe("hello")
        expect(reply.hops.map((h) => h.address)).toEqual([c1, c2])
        expect(reply.hops.every((h) => h.pid === process.pid && h.incarnation !== "")).toBe(true)
      })
    )
  )

  it.live("an empty cluster means the gateway's cluster", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const reply = yield* ping(address, { target: { cluster: "", role: "gateway", id: "gw1" } })
        expect(reply.hops.map((h) => h.address)).toEqual([{ cluster: CLUSTER, role: "gateway", id: "gw1" }])
      })
    )
  )

  it.live("a missing target or an invalid address is INVALID_ARGUMENT", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        // The client helper requires a target; a raw client can omit it.
        const client = new ClusterClient(address, credentials.createInsecure())
        const missing = yield* Effect.async<{ code: status; details: string }>((resume) => {
          client.ping({ target: undefined, relay: [], payload: "" }, (error) =>
            resume(Effect.succeed({ code: error?.code ?? status.OK, details: error?.details ?? "" }))
          )
        }).pipe(Effect.ensuring(Effect.sync(() => client.close())))
        expect(missing.code).toBe(status.INVALID_ARGUMENT)
        expect(missing.details).toContain("target")

        const badTarget = yield* callError(ping(address, { target: { ...c1, id: "c.1" } }))
        expect(badTarget.code).toBe(status.INVALID_ARGUMENT)
        expect(badTarget.details).toContain("target")

        const badRelay = yield* callError(ping(address, { target: c1, relay: [{ ...c2, role: ">" }] }))
        expect(badRelay.code).toBe(status.INVALID_ARGUMENT)
        expect(badRelay.details).toContain("relay[0]")
      })
    )
  )

  it.live("an actor that is not a member is NOT_FOUND, named with those that are, also as a relay hop", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const direct = yield* callError(ping(address, { target: { ...c1, id: "ghost" } }))
        expect(direct.code).toBe(status.NOT_FOUND)
        expect(direct.reefCode).toBe("ERROR_CODE_NOT_FOUND")
        expect(direct.details).toMatch(/^no actor counter\/ghost in cluster \S+ \(there are counter\//)

        const relayed = yield* callError(ping(address, { target: c1, relay: [{ ...c2, id: "ghost" }] }))
        expect(relayed.code).toBe(status.NOT_FOUND)
        expect(relayed.details).toContain("ghost")
      })
    )
  )

  it.live("the server span is a child of the caller's traceparent", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const testSpans = yield* TestSpans
        yield* ping(address, { target: c1 }).pipe(Effect.withSpan("caller"))
        const spans = yield* testSpans.spans
        const caller = spans.find((s) => s.name === "caller")!
        const server = spans.find((s) => s.name === "reef.v1.Cluster/Ping" && s.kind === 1 /* SERVER */)
        expect(server).toBeDefined()
        expect(server!.spanContext().traceId).toBe(caller.spanContext().traceId)
        expect(server!.attributes).toMatchObject({
          "rpc.system": "grpc",
          "rpc.service": "reef.v1.Cluster",
          "rpc.method": "Ping",
          "rpc.grpc.status_code": GrpcCode.OK
        })
        // The actor's `process` span continues the same trace across the bus.
        const process = spans.find(
          (s) => s.name.startsWith("process ") && s.spanContext().traceId === caller.spanContext().traceId
        )
        expect(process).toBeDefined()
      })
    )
  )

  it.live("without a traceparent the gateway starts the trace", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const testSpans = yield* TestSpans
        const client = new ClusterClient(address, credentials.createInsecure())
        yield* Effect.async<void>((resume) => {
          client.ping({ target: c1, relay: [], payload: "" }, new Metadata(), () => resume(Effect.void))
        }).pipe(Effect.ensuring(Effect.sync(() => client.close())))
        const server = (yield* testSpans.spans).find((s) => s.name === "reef.v1.Cluster/Ping")!
        expect(server.parentSpanContext).toBeUndefined()
      })
    )
  )
})

describe("health and reflection", () => {
  it.live("the health service answers SERVING for the server and for reef.v1.Cluster", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const Health = makeGenericClientConstructor(healthService as never, "Health")
        const client = new Health(address, credentials.createInsecure())
        const check = (service: string) =>
          Effect.async<unknown>((resume) => {
            client.Check({ service }, (error: Error | null, response: unknown) =>
              resume(error === null ? Effect.succeed(response) : Effect.die(error))
            )
          })
        expect(yield* check("")).toEqual({ status: "SERVING" })
        expect(yield* check("reef.v1.Cluster")).toEqual({ status: "SERVING" })
        client.close()
      })
    )
  )

  it.live("server reflection lists reef.v1.Cluster and describes it", () =>
    withCluster(({ address }) =>
      Effect.gen(function* () {
        const reflectionProtos = join(dirname(createRequire(import.meta.url).resolve("@grpc/reflection")), "../proto")
        const definition = loadSync("grpc/reflection/v1/reflection.proto", { includeDirs: [reflectionProtos] })
        const grpc = loadPackageDefinition(definition) as any
        const client = new grpc.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure())
        const ask = (request: object) =>
          Effect.async<any>((resume) => {
            const call = client.ServerReflectionInfo()
            call.on("data", (response: unknown) => {
              resume(Effect.succeed(response))
              call.end()
            })
            call.on("error", (error: Error) => resume(Effect.die(error)))
            call.write(request)
          })

        const list = yield* ask({ listServices: "" })
        const names = list.listServicesResponse.service.map((s: { name: string }) => s.name)
        expect(names).toContain("reef.v1.Cluster")
        expect(names).toContain("grpc.health.v1.Health")

        const file = yield* ask({ fileContainingSymbol: "reef.v1.Cluster" })
        expect(file.fileDescriptorResponse.fileDescriptorProto.length).toBeGreaterThan(0)
        client.close()
      })
    )
  )
})

describe("shutdown", () => {
  it.live("closing the scope ends open watch streams instead of hanging, and frees the port", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { address } = yield* cluster.pipe(Scope.extend(scope))
      // Read the two current counters, then close the gateway while the stream is open.
      const error = yield* watchMembership(address, "counter").pipe(
        Stream.zipWithIndex,
        Stream.tap(([, i]) => (i === 1 ? Effect.forkDaemon(Scope.close(scope, Exit.void)) : Effect.void)),
        Stream.runDrain,
        Effect.flip
      )
      expect(error.code).toBe(status.UNAVAILABLE)
      expect(error.details).toBe(SHUTTING_DOWN_DETAILS)
      const afterwards = yield* callError(listActors(address))
      expect(afterwards.code).toBe(status.UNAVAILABLE)
    }).pipe(Effect.provide(Layer.merge(kernel, ObservabilityTest)))
  )
})
