/**
 * Effect handlers as grpc-js handlers. A gRPC method is written as `(request, call) => Effect` (unary) or
 * `(request, call) => Stream` (server streaming); this module runs it on the server's Effect runtime and
 * does everything a handler should not repeat:
 *
 * - a `server` span named after the method (`reef.v1.Cluster/Ping`) whose parent is the incoming
 *   `traceparent` metadata when present, so a trace can start at a client or at the server;
 * - failures mapped to gRPC statuses through status.ts (the only mapping), with a `reef-error-code` trailer;
 * - a defect never crashes the server: the client gets INTERNAL, the server log gets the cause;
 * - a client cancel (or an expired deadline) interrupts the handler's fiber;
 * - server streams respect backpressure (`write` returning false waits for `drain`).
 *
 * Bidirectional methods are sessions (session.ts). Client-streaming methods are not supported: Reef's API has
 * none.
 */
import type {
  MethodDefinition,
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  sendUnaryData,
  UntypedServiceImplementation
} from "@grpc/grpc-js"
import {
  ATTR_RPC_GRPC_STATUS_CODE,
  ATTR_RPC_METHOD,
  ATTR_RPC_SERVICE,
  ATTR_RPC_SYSTEM,
  MessagingTracing,
  parentSpanFromTraceparent,
  RPC_SYSTEM_GRPC,
  TRACEPARENT_HEADER
} from "@reef/observability/tracing"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import {
  type CallInfo,
  type CallRunner,
  callInfo,
  interruptOnCancel,
  metadataString,
  methodName,
  statusObject
} from "./call.js"
import { type FramedSession, type SessionHandler, type SessionHandlers, sessionHandler } from "./session.js"
import { GrpcCode, statusOfCause, type TaggedFailure } from "./status.js"

export type UnaryHandler<I, O, R> = (request: I, call: CallInfo) => Effect.Effect<O, TaggedFailure, R>
export type ServerStreamHandler<I, O, R> = (request: I, call: CallInfo) => Stream.Stream<O, TaggedFailure, R>

type RequestOf<M> = M extends MethodDefinition<infer I, any> ? I : never
type ResponseOf<M> = M extends MethodDefinition<any, infer O> ? O : never

/** The Effect handler a method definition calls for, by its streaming shape. */
export type EffectHandler<M, R> = M extends { readonly requestStream: false; readonly responseStream: false }
  ? UnaryHandler<RequestOf<M>, ResponseOf<M>, R>
  : M extends { readonly requestStream: false; readonly responseStream: true }
    ? ServerStreamHandler<RequestOf<M>, ResponseOf<M>, R>
    : M extends { readonly requestStream: true; readonly responseStream: true }
      ?
          | SessionHandler<RequestOf<M>, ResponseOf<M>, R>
          | SessionHandlers<RequestOf<M>, ResponseOf<M>, R>
          | FramedSession<RequestOf<M>, ResponseOf<M>, R>
      : never

/** One Effect handler per method of a grpc-js service definition (e.g. ts-proto's `ClusterService`). */
export type EffectHandlers<D, R> = { readonly [K in keyof D]: EffectHandler<D[K], R> }

/** A service the server can add once it has a CallRunner. */
export interface GrpcService<R = never> {
  readonly definition: ServiceDefinition
  /** Fully qualified service name, e.g. `reef.v1.Cluster` (used for health status). */
  readonly name: string
  readonly bind: (runner: CallRunner<R>) => UntypedServiceImplementation
}

/** `reef.v1.Cluster/Ping` → `reef.v1.Cluster`. */
export const serviceNameOf = (definition: ServiceDefinition): string => {
  const first = Object.values(definition)[0]
  if (first === undefined) throw new Error("a gRPC service definition needs at least one method")
  return methodName(first.path).split("/")[0] ?? ""
}

/**
 * Wraps a handler's effect: a server span (child of the caller's traceparent, or a new root), the status code
 * as a span attribute, and a log line for defects (inside the span, so the log carries the trace id).
 */
const served = <A, R>(info: CallInfo, effect: Effect.Effect<A, TaggedFailure, R>) => {
  const logged = Effect.tapDefect(effect, (cause) =>
    Effect.logError(`gRPC ${info.method} died; the client gets INTERNAL`, cause).pipe(
      Effect.annotateLogs({ peer: info.peer })
    )
  )
  return withServerSpan(info.method, metadataString(info.metadata, TRACEPARENT_HEADER), logged)
}

/**
 * Runs `effect` in a `server` span named `fullMethod` (child of `traceparent`, or a new root) when tracing is
 * on. Also for one request of a session, which has no metadata of its own.
 */
export const withServerSpan = <A, R>(
  fullMethod: string,
  traceparent: string | undefined,
  effect: Effect.Effect<A, TaggedFailure, R>
): Effect.Effect<A, TaggedFailure, R> =>
  // Without an exporter a span per call is pure cost: nothing reads it, and every request would pay for it.
  Effect.flatMap(MessagingTracing, (tracing) => (tracing ? inServerSpan(fullMethod, traceparent, effect) : effect))

const inServerSpan = <A, R>(
  fullMethod: string,
  traceparent: string | undefined,
  effect: Effect.Effect<A, TaggedFailure, R>
) => {
  const [service, method] = fullMethod.split("/")
  const parent = parentSpanFromTraceparent(traceparent)
  return effect.pipe(
    Effect.onExit((exit) =>
      Effect.annotateCurrentSpan(
        ATTR_RPC_GRPC_STATUS_CODE,
        Exit.isSuccess(exit) ? GrpcCode.OK : statusOfCause(exit.cause).code
      )
    ),
    Effect.withSpan(fullMethod, {
      kind: "server",
      // The span name says which method; a stack trace per call is not worth its cost.
      captureStackTrace: false,
      attributes: { [ATTR_RPC_SYSTEM]: RPC_SYSTEM_GRPC, [ATTR_RPC_SERVICE]: service, [ATTR_RPC_METHOD]: method },
      ...Option.match(parent, { onNone: () => ({ root: true }), onSome: (span) => ({ parent: span }) })
    })
  )
}

/** A grpc-js unary handler running `handler` on the server runtime. */
export const unaryHandler =
  <I, O, R>(runner: CallRunner<R>, path: string, handler: UnaryHandler<I, O, R>) =>
  (call: ServerUnaryCall<I, O>, callback: sendUnaryData<O>): void => {
    const info = callInfo(path, call)
    const fiber = runner.runUnary(
      served(
        info,
        Effect.suspend(() => handler(call.request, info))
      )
    )
    fiber.addObserver((exit) => {
      if (call.cancelled) return
      if (Exit.isSuccess(exit)) callback(null, exit.value)
      else callback(statusObject(statusOfCause(exit.cause)))
    })
    interruptOnCancel(call, fiber)
  }

/** Writes one message, waiting for `drain` when the stream's buffer is full. */
const write = <O>(call: ServerWritableStream<unknown, O>, message: O) =>
  Effect.async<void>((resume) => {
    if (call.write(message)) return resume(Effect.void)
    const onDrain = () => resume(Effect.void)
    call.once("drain", onDrain)
    return Effect.sync(() => call.removeListener("drain", onDrain))
  })

/** A grpc-js server-streaming handler writing every element of `handler`'s stream, then ending the call. */
export const serverStreamHandler =
  <I, O, R>(runner: CallRunner<R>, path: string, handler: ServerStreamHandler<I, O, R>) =>
  (call: ServerWritableStream<I, O>): void => {
    const info = callInfo(path, call)
    const effect = Stream.suspend(() => handler(call.request, info)).pipe(
      Stream.runForEach((message) => write(call, message))
    )
    const fiber = runner.runStream(served(info, effect))
    fiber.addObserver((exit) => {
      if (call.cancelled) return
      if (Exit.isSuccess(exit)) call.end()
      // grpc-js's documented way to end a server stream with a status.
      else call.emit("error", statusObject(statusOfCause(exit.cause)))
    })
    interruptOnCancel(call, fiber)
  }

/** The grpc-js implementation of `definition` from Effect handlers. */
export const implement = <D extends ServiceDefinition, R>(
  definition: D,
  handlers: EffectHandlers<D, R>,
  runner: CallRunner<R>
): UntypedServiceImplementation => {
  const implementation: UntypedServiceImplementation = {}
  for (const [key, method] of Object.entries(definition) as Array<[keyof D & string, MethodDefinition<any, any>]>) {
    const handler = handlers[key] as unknown
    if (method.requestStream && !method.responseStream) {
      throw new Error(`${method.path}: client-streaming methods are not supported`)
    }
    implementation[key] = method.requestStream
      ? sessionHandler(
          runner,
          method.path,
          handler as SessionHandler<any, any, R> | SessionHandlers<any, any, R> | FramedSession<unknown, unknown, R>
        )
      : method.responseStream
        ? serverStreamHandler(runner, method.path, handler as ServerStreamHandler<any, any, R>)
        : unaryHandler(runner, method.path, handler as UnaryHandler<any, any, R>)
  }
  return implementation
}

/**
 * A service served by `serveGrpc` from Effect handlers. Build the handlers inside an Effect that reads the
 * services they need (`yield* Membership`), so their requirement `R` is only what the runtime provides.
 */
export const grpcService = <D extends ServiceDefinition, R = never>(
  definition: D,
  handlers: EffectHandlers<D, R>
): GrpcService<R> => ({
  definition,
  name: serviceNameOf(definition),
  bind: (runner) => implement(definition, handlers, runner)
})

/** A service with a hand-written grpc-js implementation (no Effect runtime, no spans, no status mapping). */
export const rawGrpcService = (
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation
): GrpcService<never> => ({ definition, name: serviceNameOf(definition), bind: () => implementation })
