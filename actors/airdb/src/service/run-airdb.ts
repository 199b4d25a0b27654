/**
 * The `airdb` role: one AirDB client process serving reef.v1.AirDB over gRPC for programs that do not embed
 * the library. It is a client of the shared log like any other (serverless SMR): kill it and nothing is lost,
 * start another anywhere. With `mode: "slsmr"` the same process is the SLSMR baseline's server instead: it
 * downloads the whole state into memory at start (every snapshot block) and serves from there.
 */
import { randomBytes } from "node:crypto"
import { serveGrpc } from "@reef/grpc"
import { defineActor, type Kernel, PresenceDetails, spawn } from "@reef/kernel"
import { descriptorSetPath } from "@reef/proto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type AirDbClient, openClient } from "../client/client.js"
import type { Isolation } from "../core/types.js"
import { airDbGrpcService } from "./airdb-service.js"
import { openSegmentStore, type StorageOptions } from "./storage.js"

export interface RunAirDbOptions {
  readonly id: string
  /** The store's name (its segments' prefix). */
  readonly store: string
  readonly storage: StorageOptions
  readonly grpcPort: number
  readonly grpcHost?: string
  readonly isolation?: Isolation
  /** "airdb" (default): a serverless client with a bounded cache; "slsmr": a full-state server. */
  readonly mode?: "airdb" | "slsmr"
  readonly cacheBytes?: number
}

export interface AirDbHandle {
  readonly grpcAddress: string
  readonly client: AirDbClient
  readonly coldStartMs: number
}

/** Presence only: the role shows in `reef status`; its work is the gRPC service. */
const airdbActor = (role: string) =>
  defineActor<undefined>({ role, description: `AirDB ${role}`, initialState: Effect.succeed(undefined), handlers: [] })

/** The service without the kernel: a client on the named storage, served over gRPC (benchmarks use it). */
export const serveAirDb = (options: Omit<RunAirDbOptions, "id"> & { readonly clientId: string }) =>
  Effect.gen(function* () {
    const store = yield* openSegmentStore(options.storage)
    const client = yield* openClient(store, {
      store: options.store,
      // A restarted process is a new incarnation: its writer id is never reused.
      clientId: options.clientId,
      ...(options.isolation === undefined ? {} : { isolation: options.isolation }),
      ...(options.cacheBytes === undefined ? {} : { cacheBytes: options.cacheBytes }),
      eager: options.mode === "slsmr"
    })
    const server = yield* serveGrpc({
      port: options.grpcPort,
      ...(options.grpcHost === undefined ? {} : { host: options.grpcHost }),
      services: [airDbGrpcService(client)],
      reflection: { descriptorSet: descriptorSetPath, protoFiles: ["reef/v1/airdb.proto"] }
    })
    const handle: AirDbHandle = { grpcAddress: server.address, client, coldStartMs: client.stats().coldStartMs }
    return handle
  })

/** The role could not start: its storage, its store or its gRPC port refused (the message says which). */
export class AirDbStartError extends Data.TaggedError("AirDbStartError")<{ readonly message: string }> {}

const messageOf = (e: unknown): string =>
  e instanceof Error || (typeof e === "object" && e !== null && "message" in e)
    ? String((e as { message: unknown }).message)
    : String(e)

export const runAirDb = (options: RunAirDbOptions): Effect.Effect<AirDbHandle, AirDbStartError, Kernel | Scope.Scope> =>
  Effect.gen(function* () {
    // A restarted process is a new incarnation: its writer id is never reused.
    const handle = yield* serveAirDb({ ...options, clientId: `${options.id}-${randomBytes(4).toString("hex")}` })
    const role = options.mode === "slsmr" ? "slsmr" : "airdb"
    yield* spawn(airdbActor(role), options.id)
    // `reef status` shows the endpoint and how far this client is; `reef airdb ...` finds it by the endpoint.
    const presence = yield* PresenceDetails
    yield* presence.announce({ grpc: handle.grpcAddress }, { role, id: options.id })
    yield* presence.reportStatus(
      { role, id: options.id },
      Effect.sync(() => {
        const s = handle.client.stats()
        return {
          store: options.store,
          backend: options.storage.backend,
          entries: String(s.entries),
          "chain end": String(s.chainEnd),
          "tail keys": String(s.tailKeys),
          "cache MB": (s.cacheBytes / 1024 ** 2).toFixed(1)
        }
      })
    )
    return handle
  }).pipe(Effect.mapError((e) => new AirDbStartError({ message: `airdb ${options.id}: ${messageOf(e)}` })))
