/**
 * The gateway: the cluster's gRPC front door. It serves `reef.v1.Cluster` (plus health and reflection) from
 * the kernel services in context, and, given an `id`, joins the cluster as the actor `gateway/<id>` so
 * `reef up` and `reef status` see it (and it answers Ping like every actor).
 *
 * Order matters: the actor joins only once the port is bound, so "gateway joined" means "gRPC is served";
 * on shutdown it leaves first, then the server drains.
 */
import { type GrpcServerError, type GrpcServerInfo, serveGrpc } from "@reef/grpc"
import { type BusError, defineActor, type InvalidAddressError, type Kernel, spawn } from "@reef/kernel"
import { descriptorSetPath } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { type ClusterServiceOptions, makeClusterService } from "./cluster-service.js"

export const GATEWAY_ROLE = "gateway"
export const DEFAULT_GATEWAY_PORT = 50051
/** The .proto files (in @reef/proto's compiled descriptor set) reflection describes. */
export const GATEWAY_PROTO_FILES: ReadonlyArray<string> = ["reef/v1/cluster.proto"]

export interface GatewayOptions extends ClusterServiceOptions {
  /** Defaults to 127.0.0.1; 0.0.0.0 to accept remote clients. */
  readonly host?: string
  /** Defaults to 50051; 0 picks a free port. */
  readonly port?: number
  /** When set, the gateway joins the membership as the actor `gateway/<id>`. */
  readonly id?: string
  /** Grace period for calls in flight at shutdown (see serveGrpc). */
  readonly shutdownGraceMs?: number
}

/** The gateway's own actor: no handlers beyond the kernel's Ping, present for membership. */
export const gatewayActor = defineActor<void>({
  role: GATEWAY_ROLE,
  description: "Reef gRPC gateway (reef.v1.Cluster)",
  initialState: Effect.void,
  handlers: []
})

/** Serves the gateway until the scope closes; returns where it listens. */
export const runGateway = (options: GatewayOptions = {}) =>
  Effect.gen(function* () {
    const cluster = yield* makeClusterService(options)
    const server = yield* serveGrpc({
      host: options.host,
      port: options.port ?? DEFAULT_GATEWAY_PORT,
      services: [cluster],
      reflection: { descriptorSet: descriptorSetPath, protoFiles: GATEWAY_PROTO_FILES },
      shutdownGraceMs: options.shutdownGraceMs
    })
    if (options.id !== undefined) yield* spawn(gatewayActor, options.id)
    return server
  }) satisfies Effect.Effect<GrpcServerInfo, GrpcServerError | InvalidAddressError | BusError, Kernel | Scope.Scope>

/** The gateway as a Layer over a kernel, for processes that only need it running. */
export const gatewayLayer = (options: GatewayOptions = {}) => Layer.scopedDiscard(runGateway(options))
