/**
 * A grpc-js server as a scoped Effect resource for any Reef process that serves gRPC (the gateway serves
 * `reef.v1.Cluster`, a replica serves `reef.v1.KV`).
 *
 * Every server also gets the standard health service (`grpc.health.v1.Health`: SERVING for "" and for each
 * service while open, NOT_SERVING once shutdown starts) and server reflection built from the given .proto files,
 * so `grpcurl -plaintext HOST:PORT list` and `grpc_health_probe` work without extra setup. Both are loaded on
 * their first call (on-first-call.ts): most processes never get one.
 *
 * Shutdown (scope close): health goes NOT_SERVING, the server stops accepting calls (`tryShutdown`), open
 * server streams are ended with UNAVAILABLE (they would otherwise never finish), unary calls get
 * `shutdownGraceMs` to finish, and then `forceShutdown` cancels whatever is left.
 */
import { existsSync } from "node:fs"
import { type Server as GrpcJsServer, Server, type ServerOptions } from "@grpc/grpc-js"
import { descriptorSetPath } from "@reef/proto"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { CallRunner } from "./call.js"
import type { GrpcService } from "./handlers.js"
import { addReflection, LazyHealth } from "./on-first-call.js"
import { grpcServerCredentials, securityInterceptors } from "./security.js"
import { markUndecodableRequests, refuseUndecodable } from "./undecodable.js"

/** The server could not start: protos did not load, or the address could not be bound. */
export class GrpcServerError extends Data.TaggedError("GrpcServerError")<{
  readonly operation: "load-protos" | "bind"
  readonly target: string
  readonly cause: unknown
}> {
  override get message() {
    const reason = (this.cause as Error)?.message ?? String(this.cause)
    return this.operation === "bind"
      ? `cannot bind gRPC server to ${this.target}: ${reason}`
      : `cannot load ${this.target} for gRPC reflection: ${reason}`
  }
}

export interface ReflectionOptions {
  /** The compiled FileDescriptorSet reflection serves from, `descriptorSetPath` from @reef/proto. */
  readonly descriptorSet: string
  /** The files in it that define the served services, e.g. `reef/v1/cluster.proto`; their imports come along. */
  readonly protoFiles: ReadonlyArray<string>
}

export interface ServeGrpcOptions<R> {
  /** Interface to listen on; defaults to 127.0.0.1. Use 0.0.0.0 (or ::) to accept remote clients. */
  readonly host?: string
  /** 0 (the default) picks a free port; the bound one is returned. */
  readonly port?: number
  readonly services: ReadonlyArray<GrpcService<R>>
  /** Without it, reflection describes only the health service. */
  readonly reflection?: ReflectionOptions
  /** How long unary calls in flight may run after shutdown starts before they are cancelled. */
  readonly shutdownGraceMs?: number
  readonly serverOptions?: ServerOptions
}

export interface GrpcServerInfo {
  readonly host: string
  readonly port: number
  /** `host:port`, ready for a client. */
  readonly address: string
}

export const DEFAULT_GRPC_HOST = "127.0.0.1"
export const DEFAULT_SHUTDOWN_GRACE_MS = 5_000

const HEALTH_SERVICE = "grpc.health.v1.Health"

/** `host:port`, with brackets for IPv6 hosts. */
export const hostPort = (host: string, port: number): string =>
  host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`

/**
 * Reflection's descriptors are decoded on its first call (reflection.ts); a missing descriptor set fails the
 * start. Without reflection options only the health service is described.
 */
const reflectionFiles = (options: ReflectionOptions | undefined) =>
  Effect.suspend(() => {
    const files = { descriptorSet: options?.descriptorSet ?? descriptorSetPath, protoFiles: options?.protoFiles ?? [] }
    return existsSync(files.descriptorSet)
      ? Effect.succeed(files)
      : Effect.fail(
          new GrpcServerError({
            operation: "load-protos",
            target: files.descriptorSet,
            cause: new Error("no such file (pnpm gen writes it)")
          })
        )
  })

const bind = (server: GrpcJsServer, target: string) =>
  Effect.async<number, GrpcServerError>((resume) => {
    // TLS (and mutual TLS) when the process has a certificate: security.ts.
    server.bindAsync(target, grpcServerCredentials(), (error, port) =>
      resume(
        error === null
          ? Effect.succeed(port)
          : Effect.fail(new GrpcServerError({ operation: "bind", target, cause: error }))
      )
    )
  })

/**
 * Stops the server: NOT_SERVING, stop accepting, end streams, wait up to the grace period for unary calls,
 * then force. Never fails.
 */
const shutdown = (
  server: GrpcJsServer,
  health: LazyHealth,
  serviceNames: ReadonlyArray<string>,
  streams: Effect.Effect<void>,
  graceMs: number
) =>
  Effect.gen(function* () {
    for (const name of serviceNames) health.setStatus(name, "NOT_SERVING")
    const stopped = yield* Deferred.make<void>()
    yield* Effect.sync(() => server.tryShutdown(() => Deferred.unsafeDone(stopped, Exit.void)))
    yield* streams
    // Finalizers are uninterruptible: the wait must be made interruptible, or the timeout could never fire
    // and one lingering HTTP/2 session would hold the process past its grace period.
    const graceful = yield* Deferred.await(stopped).pipe(
      Effect.interruptible,
      Effect.timeout(Duration.millis(graceMs)),
      Effect.option
    )
    if (Option.isNone(graceful)) {
      yield* Effect.logWarning(`gRPC calls still open ${graceMs} ms after shutdown started; cancelling them`)
      yield* Effect.sync(() => server.forceShutdown())
    }
  })

/**
 * Serves `services` (plus health and reflection) until the current scope closes. Handler fibers run on the
 * runtime of the caller, so the services, tracer and logger in context are the handlers' too.
 */
export const serveGrpc = <R = never>(
  options: ServeGrpcOptions<R>
): Effect.Effect<GrpcServerInfo, GrpcServerError, R | Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? DEFAULT_GRPC_HOST
    const reflection = yield* reflectionFiles(options.reflection)

    // Created before the server, so they are closed after it: shutdown uses them first.
    const unaryCalls = yield* FiberSet.make()
    const streamCalls = yield* FiberSet.make()
    const runner: CallRunner<R> = {
      runUnary: yield* FiberSet.runtime(unaryCalls)<R>(),
      runStream: yield* FiberSet.runtime(streamCalls)<R>()
    }

    const serviceNames = ["", ...options.services.map((s) => s.name)]
    const health = new LazyHealth()
    for (const name of [...serviceNames, HEALTH_SERVICE]) health.setStatus(name, "SERVING")

    const server = yield* Effect.acquireRelease(
      Effect.sync(() => {
        // A bearer token, when the process has one, is checked first, before any request is decoded (security.ts).
        const server = new Server({
          ...options.serverOptions,
          interceptors: [...securityInterceptors(), refuseUndecodable, ...(options.serverOptions?.interceptors ?? [])]
        })
        markUndecodableRequests(server)
        for (const service of options.services) server.addService(service.definition, service.bind(runner))
        health.addToServer(server)
        addReflection(server, reflection)
        return server
      }),
      (server) =>
        shutdown(
          server,
          health,
          [...serviceNames, HEALTH_SERVICE],
          FiberSet.clear(streamCalls),
          options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS
        )
    )
    const port = yield* bind(server, hostPort(host, options.port ?? 0))
    const info: GrpcServerInfo = { host, port, address: hostPort(host, port) }
    yield* Effect.logInfo(`gRPC server listening on ${info.address}`).pipe(
      Effect.annotateLogs({ services: serviceNames.filter((n) => n !== "").join(",") })
    )
    return info
  })
