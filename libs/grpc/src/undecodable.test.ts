/**
 * Bytes that are not the method's request message get INVALID_ARGUMENT on every kind of method a server has:
 * an Effect unary method, an Effect server stream and a hand-written (raw) service; the server keeps serving
 * valid calls afterwards (health too).
 */
import { describe, expect, it } from "@effect/vitest"
import { type Client, credentials, type Metadata, makeGenericClientConstructor, status } from "@grpc/grpc-js"
import { ClusterClient, ClusterService } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { serveGrpc } from "./grpc-server.js"
import { grpcService, rawGrpcService } from "./handlers.js"
import { REEF_ERROR_CODE_TRAILER } from "./status.js"

/** Field 1, length-delimited, claiming 255 bytes that are not there: every protobuf decoder refuses it. */
const GARBAGE = Buffer.from([0x0a, 0xff, 0x01, 0x02])

const bytes = (b: Buffer) => b
const rawMethod = (path: string, responseStream: boolean) => ({
  path,
  requestStream: false,
  responseStream,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes
})

/** A client that sends whatever bytes it is given to these paths. */
const RawClient = makeGenericClientConstructor(
  {
    ping: rawMethod("/reef.v1.Cluster/Ping", false),
    watch: rawMethod("/reef.v1.Cluster/WatchMembership", true),
    health: rawMethod("/grpc.health.v1.Health/Check", false),
    echo: rawMethod("/test.Raw/Echo", false)
  },
  "Raw"
)

interface Outcome {
  readonly code: number
  readonly details: string
  readonly reefCode: string | undefined
}

const unary = (client: Client, method: "ping" | "health" | "echo", payload: Buffer) =>
  Effect.async<Outcome>((resume) => {
    ;(client as unknown as Record<string, Function>)[method]!(
      payload,
      (error: { code: number; details: string; metadata: Metadata } | null) =>
        resume(
          Effect.succeed({
            code: error?.code ?? status.OK,
            details: error?.details ?? "",
            reefCode: error?.metadata.get(REEF_ERROR_CODE_TRAILER)[0] as string | undefined
          })
        )
    )
  })

const serverStream = (client: Client, payload: Buffer) =>
  Effect.async<Outcome>((resume) => {
    const call = (client as unknown as { watch: (b: Buffer) => NodeJS.EventEmitter }).watch(payload)
    call.on("data", () => {})
    call.on("error", (e: { code: number; details: string; metadata: Metadata }) =>
      resume(
        Effect.succeed({
          code: e.code,
          details: e.details,
          reefCode: e.metadata.get(REEF_ERROR_CODE_TRAILER)[0] as string | undefined
        })
      )
    )
    call.on("end", () => resume(Effect.succeed({ code: status.OK, details: "", reefCode: undefined })))
  })

describe("undecodable requests", () => {
  it.scopedLive("are INVALID_ARGUMENT on Effect and raw methods; the server goes on", () =>
    Effect.gen(function* () {
      const echoDefinition = {
        echo: {
          ...rawMethod("/test.Raw/Echo", false),
          requestDeserialize: (b: Buffer) => {
            if (b[0] !== 0x01) throw new Error("not an echo request")
            return b
          }
        }
      }
      const server = yield* serveGrpc({
        services: [
          grpcService(ClusterService, {
            listActors: () => Effect.die("unused"),
            watchMembership: () => Stream.empty,
            ping: (request) => Effect.succeed({ hops: [], payload: request.payload })
          }),
          rawGrpcService(echoDefinition, {
            echo: (call: { request: Buffer }, callback: (e: null, v: Buffer) => void) => callback(null, call.request)
          })
        ]
      })
      const raw = yield* Effect.acquireRelease(
        Effect.sync(() => new RawClient(server.address, credentials.createInsecure())),
        (c) => Effect.sync(() => c.close())
      )
      for (const method of ["ping", "echo"] as const) {
        const r = yield* unary(raw, method, GARBAGE)
        expect(r.code, `${method}: ${r.details}`).toBe(status.INVALID_ARGUMENT)
        expect(r.reefCode).toBe("ERROR_CODE_INVALID_ARGUMENT")
        expect(r.details).toMatch(/not a valid/)
      }
      const streamed = yield* serverStream(raw, GARBAGE)
      expect(streamed.code, streamed.details).toBe(status.INVALID_ARGUMENT)
      // Valid calls still work, on the same connection and with a generated client.
      expect((yield* unary(raw, "echo", Buffer.from([0x01, 0x02]))).code).toBe(status.OK)
      expect((yield* unary(raw, "health", Buffer.alloc(0))).code).toBe(status.OK)
      const client = new ClusterClient(server.address, credentials.createInsecure())
      const reply = yield* Effect.async<string>((resume) => {
        client.ping({ target: undefined, relay: [], payload: "fine" }, (e, v) =>
          resume(e === null ? Effect.succeed(v.payload) : Effect.die(e))
        )
      })
      client.close()
      expect(reply).toBe("fine")
    })
  )
})
