/**
 * A small Effect client of `reef.v1.Cluster` for the CLI and tests: one grpc-js ClusterClient per call
 * (opened and closed in a scope), a `client` span per call whose context travels as `traceparent` metadata
 * (so a trace can start at the CLI), and gRPC failures as one tagged error carrying the status.
 */
import { Metadata, type ServiceError, status } from "@grpc/grpc-js"
import { grpcClientCredentials } from "@reef/grpc/security"
import { REEF_ERROR_CODE_TRAILER } from "@reef/grpc/trailer"
import {
  ATTR_RPC_METHOD,
  ATTR_RPC_SERVICE,
  ATTR_RPC_SYSTEM,
  currentTraceparent,
  RPC_SYSTEM_GRPC,
  TRACEPARENT_HEADER
} from "@reef/observability/tracing"
import type { ActorAddress } from "@reef/proto"
// Subpaths: a CLI command that only lists actors loads these schemas, not every one of Reef's.
import { ClusterClient, type PingReply, type PingRequest } from "@reef/proto/cluster"
import type { Member } from "@reef/proto/presence"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** A Cluster call failed; `code` is the gRPC status, `reefCode` the `reef-error-code` trailer when sent. */
export class GatewayCallError extends Data.TaggedError("GatewayCallError")<{
  readonly method: string
  readonly code: status
  readonly details: string
  readonly reefCode: string | undefined
}> {
  override get message() {
    return `${this.method} failed: ${status[this.code] ?? this.code}: ${this.details}`
  }
}

export interface CallOptions {
  /** Deadline of a unary call; defaults to 10 s. */
  readonly timeoutMs?: number
}

const DEFAULT_TIMEOUT_MS = 10_000

export const callError = (method: string, error: Partial<ServiceError>) => {
  const reefCode = error.metadata?.get(REEF_ERROR_CODE_TRAILER)[0]
  return new GatewayCallError({
    method,
    code: error.code ?? status.UNKNOWN,
    details: error.details ?? error.message ?? "",
    reefCode: typeof reefCode === "string" ? reefCode : undefined
  })
}

/** A ClusterClient for `address` (`host:port`), closed when the scope closes. */
export const clusterClient = (address: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new ClusterClient(address, grpcClientCredentials())),
    (client) => Effect.sync(() => client.close())
  )

/** Metadata carrying the current span's traceparent. */
export const traceMetadata = Effect.map(currentTraceparent, (traceparent) => {
  const metadata = new Metadata()
  if (Option.isSome(traceparent)) metadata.set(TRACEPARENT_HEADER, traceparent.value)
  return metadata
})

const clientSpan = (method: string) =>
  Effect.withSpan(`reef.v1.Cluster/${method}`, {
    kind: "client",
    attributes: { [ATTR_RPC_SYSTEM]: RPC_SYSTEM_GRPC, [ATTR_RPC_SERVICE]: "reef.v1.Cluster", [ATTR_RPC_METHOD]: method }
  })

type Unary<I, O> = (
  request: I,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, response: O) => void
) => { cancel(): void }

const unary = <I, O>(
  address: string,
  method: string,
  call: (client: ClusterClient) => Unary<I, O>,
  request: I,
  options: CallOptions
): Effect.Effect<O, GatewayCallError> =>
  Effect.gen(function* () {
    const client = yield* clusterClient(address)
    const metadata = yield* traceMetadata
    const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    return yield* Effect.async<O, GatewayCallError>((resume) => {
      const pending = call(client).call(client, request, metadata, { deadline }, (error, response) =>
        resume(error === null ? Effect.succeed(response) : Effect.fail(callError(method, error)))
      )
      return Effect.sync(() => pending.cancel())
    })
  }).pipe(Effect.scoped, clientSpan(method))

/** The members the gateway knows: one role or all, LEFT ones only with `includeLeft`. */
export const listActors = (
  address: string,
  role = "",
  options: CallOptions & { readonly includeLeft?: boolean } = {}
): Effect.Effect<ReadonlyArray<Member>, GatewayCallError> =>
  Effect.map(
    unary(address, "ListActors", (c) => c.listActors, { role, includeLeft: options.includeLeft ?? false }, options),
    (response) => response.members
  )

/** Pings `target` (through `relay`, in order); an empty cluster in an address means the gateway's cluster. */
export const ping = (
  address: string,
  request: { readonly target: ActorAddress; readonly relay?: ReadonlyArray<ActorAddress>; readonly payload?: string },
  options: CallOptions = {}
): Effect.Effect<PingReply, GatewayCallError> => {
  const message: PingRequest = {
    target: request.target,
    relay: [...(request.relay ?? [])],
    payload: request.payload ?? ""
  }
  return unary(address, "Ping", (c) => c.ping, message, options)
}
