/**
 * The methods health and reflection are registered under before they load are the ones the loaded services
 * register, and a server answers both through them (grpc-server.test.ts checks health statuses over a
 * shutdown; services/gateway's test lists services through reflection).
 */
import { describe, expect, it } from "@effect/vitest"
import { credentials, makeGenericClientConstructor, type ServiceDefinition, status } from "@grpc/grpc-js"
import { loadSync } from "@grpc/proto-loader"
import { ReflectionService } from "@grpc/reflection"
import { protoRoot } from "@reef/proto"
import * as Effect from "effect/Effect"
import { HealthImplementation, service as healthService } from "grpc-health-check"
import { serveGrpc } from "./grpc-server.js"
import { HEALTH_METHODS, type LazyMethod, REFLECTION_METHODS, registeredMethods } from "./on-first-call.js"

const shapes = (methods: ReadonlyArray<LazyMethod>) =>
  methods.map((m) => ({ path: m.path, requestStream: m.requestStream, responseStream: m.responseStream }))

const registeredShapes = (addToServer: Parameters<typeof registeredMethods>[0]) =>
  [...registeredMethods(addToServer).values()].map(({ attributes }) => ({
    path: attributes.path,
    requestStream: attributes.requestStream,
    responseStream: attributes.responseStream
  }))

describe("health and reflection on first call", () => {
  it("registers health's methods as grpc-health-check does", () => {
    expect(shapes(HEALTH_METHODS)).toEqual(registeredShapes((server) => new HealthImplementation().addToServer(server)))
  })

  it("registers reflection's methods as @grpc/reflection does", () => {
    const definitions = loadSync(["reef/v1/kv.proto"], { includeDirs: [protoRoot] })
    // proto-loader's tree is enough for the method shapes (reflection.ts serves compiled descriptors).
    expect(shapes(REFLECTION_METHODS)).toEqual(
      registeredShapes((server) => new ReflectionService(definitions).addToServer(server))
    )
  })

  it.scoped("answers a health check with the status set before the first call", () =>
    Effect.gen(function* () {
      const server = yield* serveGrpc({ services: [] })
      const Health = makeGenericClientConstructor(healthService as unknown as ServiceDefinition, "Health")
      const client = new Health(server.address, credentials.createInsecure())
      yield* Effect.addFinalizer(() => Effect.sync(() => client.close()))
      const check = (service: string) =>
        Effect.async<{ readonly code: status; readonly status?: string }>((resume) => {
          client.Check({ service }, (error: { code: status } | null, reply?: { status: string }) =>
            resume(Effect.succeed(error === null ? { code: status.OK, status: reply!.status } : { code: error.code }))
          )
        })
      expect(yield* check("")).toEqual({ code: status.OK, status: "SERVING" })
      expect(yield* check("grpc.health.v1.Health")).toEqual({ code: status.OK, status: "SERVING" })
      expect((yield* check("no.such.Service")).code).toBe(status.NOT_FOUND)
    })
  )
})
