/**
 * Effect handlers as grpc-js handlers. A gRPC method is written as `(request, call) => Effect` (unary) or
 * `(request, call) => Stream` (server streaming); this module runs it on the server's Effect runtime and
 * does everything a handler should not repeat:
 *
 * - a `server` span named after the method (`reef.v1.Cluster/Ping`) whose parent is the incoming
 *   `traceparent` metadata when present, so a trace can start at a client or at the gateway;
 * - failures mapped to gRPC statuses through status.ts (the only mapping), with a `reef-error-code` trailer;
 * - a defect never crashes the server: the client gets INTERNAL, the gateway log gets the cause;
 * - a client cancel (or an expired deadline) interrupts the handler's fiber;
 * - server streams respect backpressure (`write` returning false waits for `drain`).
 *
 * Bidirectional methods are sessions (e.g. reef.v1.KV/Session): every client message is a request, handled
 * like a unary call on its own fiber, and answered by exactly one message as soon as it is done (replies are
 * not kept in request order, so they must carry the request's id). A session handler cannot fail: a request's
 * failure is part of its reply. Client-streaming methods are not supported: Reef's API has none.
 */
import type {
  Metadata as GrpcMetadata,
  MethodDefinition,
  ServerDuplexStream,
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  sendUnaryData,
  UntypedServiceImplementation
} from "@grpc/grpc-js"
import { Metadata } from "@grpc/grpc-js"
import { MessagingTracing, parentSpanFromTraceparent, TRACEPARENT_HEADER } from "@reef/observability/tracing"
import { ErrorCode } from "@reef/proto"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type GrpcStatus, REEF_ERROR_CODE_TRAILER, statusOfCause, type TaggedFailure } from "./status.js"

/** What a handler may know about its call besides the request. */
export interface CallInfo {
  /** Full method name without the leading slash, e.g. `reef.v1.Cluster/Ping`. */
  readonly method: string
  readonly metadata: GrpcMetadata
  readonly peer: string
  /** Milliseconds since the epoch by which the client wants an answer; Infinity when it set no deadline. */
  readonly deadlineMs: number
}

export type UnaryHandler<I, O, R> = (request: I, call: CallInfo) => Effect.Effect<O, TaggedFailure, R>
export type ServerStreamHandler<I, O, R> = (request: I, call: CallInfo) => Stream.Stream<O, TaggedFailure, R>
/** One request of a bidirectional session to its reply (failures included in the reply). */
export type SessionHandler<I, O, R> = (request: I, call: CallInfo) => Effect.Effect<O, never, R>

/**
 * Takes a session request without a fiber, or returns false to leave it to the session's Effect handler. It
 * may call `reply` at once or later, exactly once. For a hot path whose answer comes from a callback anyway:
 * a replica answers a write when consensus has decided it, and there a fiber per request (its FiberRefs, its
 * `Effect.async`, its observer) costs more CPU than everything else the replica does for the write.
 */
export type SessionShortcut<I, O> = (request: I, reply: (response: O) => void) => boolean

/** A session whose requests try `shortcut` first, then run `answer`. */
export interface SessionHandlers<I, O, R> {
  readonly answer: SessionHandler<I, O, R>
  readonly shortcut: SessionShortcut<I, O>
}

const FramedSessionTypeId: unique symbol = Symbol.for("@reef/gateway/FramedSession")

/** How a framed session's stream messages hold its requests (`F`) and its replies (`G`). */
export interface SessionFrames<F, G, I, O> {
  readonly requests: (frame: F) => ReadonlyArray<I>
  /** Takes the array: the session starts a new one for the next frame. */
  readonly replies: (replies: Array<O>) => G
  /** About how many bytes a reply adds to its frame, so frames stay under MAX_SESSION_FRAME_BYTES. */
  readonly replyBytes: (reply: O) => number
}

/**
 * A reply frame is sent once it holds this many bytes, without waiting for the turn to end: grpc-js refuses
 * messages over 4 MiB by default, and a turn may complete many large replies (Gets of 64 KiB values).
 */
export const MAX_SESSION_FRAME_BYTES = 1024 * 1024

/** A session whose stream messages are frames of requests and of replies: see `framedSession`. */
export interface FramedSession<F, G, R> {
  readonly [FramedSessionTypeId]: {
    readonly frames: SessionFrames<F, G, any, any>
    readonly handlers: SessionHandler<any, any, R> | SessionHandlers<any, any, R>
  }
}

/**
 * A session whose stream messages are frames (e.g. reef.v1.KV/Session): every request of a frame is handled
 * as if it came alone, and the replies completed in one turn of the event loop leave as one frame. gRPC's and
 * HTTP/2's costs are per message, not per request.
 */
export const framedSession = <F, G, I, O, R>(
  frames: SessionFrames<F, G, I, O>,
  handlers: SessionHandler<I, O, R> | SessionHandlers<I, O, R>
): FramedSession<F, G, R> => ({ [FramedSessionTypeId]: { frames, handlers } })

const isFramed = (handlers: object): handlers is FramedSession<unknown, unknown, unknown> =>
  FramedSessionTypeId in handlers

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

/**
 * Forks handler fibers on the server's runtime. Unary calls and streams are kept apart because shutdown
 * treats them differently: streams (e.g. WatchMembership) never end on their own and are interrupted at once,
 * unary calls get the grace period to finish.
 */
export interface CallRunner<R> {
  readonly runUnary: <A, E>(effect: Effect.Effect<A, E, R>) => Fiber.RuntimeFiber<A, E>
  readonly runStream: <A, E>(effect: Effect.Effect<A, E, R>) => Fiber.RuntimeFiber<A, E>
}

/** A service the server can add once it has a CallRunner. */
export interface GrpcService<R = never> {
  readonly definition: ServiceDefinition
  /** Fully qualified service name, e.g. `reef.v1.Cluster` (used for health status). */
  readonly name: string
  readonly bind: (runner: CallRunner<R>) => UntypedServiceImplementation
}

/** `/reef.v1.Cluster/Ping` → `reef.v1.Cluster/Ping`. */
export const methodName = (path: string): string => (path.startsWith("/") ? path.slice(1) : path)

/** `reef.v1.Cluster/Ping` → `reef.v1.Cluster`. */
export const serviceNameOf = (definition: ServiceDefinition): string => {
  const first = Object.values(definition)[0]
  if (first === undefined) throw new Error("a gRPC service definition needs at least one method")
  return methodName(first.path).split("/")[0] ?? ""
}

const callInfo = (
  path: string,
  call: { readonly metadata: GrpcMetadata; getPeer(): string; getDeadline(): Date | number }
): CallInfo => {
  const deadline = call.getDeadline()
  return {
    method: methodName(path),
    metadata: call.metadata,
    peer: call.getPeer(),
    deadlineMs: deadline instanceof Date ? deadline.getTime() : deadline
  }
}

/** First string value of a metadata key. */
const metadataString = (metadata: GrpcMetadata, key: string): string | undefined => {
  const value = metadata.get(key).find((v) => typeof v === "string")
  return typeof value === "string" ? value : undefined
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
      Effect.annotateCurrentSpan("rpc.grpc.status_code", Exit.isSuccess(exit) ? 0 : statusOfCause(exit.cause).code)
    ),
    Effect.withSpan(fullMethod, {
      kind: "server",
      // The span name says which method; a stack trace per call is not worth its cost.
      captureStackTrace: false,
      attributes: { "rpc.system": "grpc", "rpc.service": service, "rpc.method": method },
      ...Option.match(parent, { onNone: () => ({ root: true }), onSome: (span) => ({ parent: span }) })
    })
  )
}

/** The grpc-js error object of a status; grpc-js sends `metadata` as trailers. */
const statusObject = (grpcStatus: GrpcStatus) => {
  const metadata = new Metadata()
  metadata.set(REEF_ERROR_CODE_TRAILER, ErrorCode[grpcStatus.reefCode] ?? String(grpcStatus.reefCode))
  return { code: grpcStatus.code, details: grpcStatus.details, metadata }
}

/** Interrupts a handler when the client cancels or its deadline passes (grpc-js emits `cancelled`). */
const interruptOnCancel = (
  call: { readonly cancelled: boolean; once(event: "cancelled", listener: () => void): unknown },
  fiber: Fiber.RuntimeFiber<unknown, unknown>
) => {
  const interrupt = () => fiber.unsafeInterruptAsFork(FiberId.none)
  if (call.cancelled) interrupt()
  else call.once("cancelled", interrupt)
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

/** Requests of one session handled at once; beyond it the call is paused (HTTP/2 flow control pushes back). */
export const MAX_SESSION_IN_FLIGHT = 4096

/**
 * A grpc-js bidirectional handler running a session (see the module comment). Requests run like unary calls
 * (the shutdown grace period lets them finish); the call ends once the client half-closed and every reply is
 * written; a cancel interrupts the requests in flight. At server shutdown the session stops taking requests,
 * answers those in flight, then ends with UNAVAILABLE (a stream fiber stands for the session, so the server's
 * shutdown finds it like any stream).
 */
export const sessionHandler =
  <I, O, R>(
    runner: CallRunner<R>,
    path: string,
    given: SessionHandler<I, O, R> | SessionHandlers<I, O, R> | FramedSession<unknown, unknown, R>
  ) =>
  (call: ServerDuplexStream<unknown, unknown>): void => {
    const info = callInfo(path, call)
    const framed = typeof given === "object" && isFramed(given) ? given[FramedSessionTypeId] : undefined
    const handlers = (framed?.handlers ?? given) as SessionHandler<I, O, R> | SessionHandlers<I, O, R>
    const { answer: handler, shortcut } = typeof handlers === "function" ? { answer: handlers } : handlers
    const frames = framed?.frames as SessionFrames<unknown, unknown, I, O> | undefined
    /** Replies completed in this turn of the event loop (framed sessions), written as one frame. */
    let replies: Array<O> = []
    let replyBytes = 0
    const flushReplies = () => {
      if (replies.length === 0) return
      const frame = frames!.replies(replies)
      replies = []
      replyBytes = 0
      if (!call.cancelled) call.write(frame)
    }
    const send = (reply: O) => {
      if (frames === undefined) return void call.write(reply)
      if (replies.length === 0) setImmediate(flushReplies)
      replies.push(reply)
      replyBytes += frames.replyBytes(reply)
      if (replyBytes >= MAX_SESSION_FRAME_BYTES) flushReplies()
    }
    const inFlight = new Set<Fiber.RuntimeFiber<O>>()
    /** Requests a shortcut took and has not answered yet. */
    let shortcutsInFlight = 0
    const inFlightCount = () => inFlight.size + shortcutsInFlight
    let halfClosed = false
    let shuttingDown = false
    let ended = false
    const endIfDone = () => {
      if (ended || call.cancelled || inFlightCount() > 0 || !(halfClosed || shuttingDown)) return
      ended = true
      session.unsafeInterruptAsFork(FiberId.none)
      flushReplies()
      if (halfClosed) call.end()
      else call.emit("error", statusObject(statusOfCause(Cause.interrupt(FiberId.none))))
    }
    const session = runner.runStream(Effect.never)
    session.addObserver(() => {
      if (ended) return
      shuttingDown = true
      call.pause()
      endIfDone()
    })
    const resumeIfRoom = () => {
      if (!shuttingDown && call.isPaused() && inFlightCount() < MAX_SESSION_IN_FLIGHT) call.resume()
    }
    const tryShortcut = (request: I): boolean => {
      if (shortcut === undefined) return false
      let answered = false
      shortcutsInFlight++
      const taken = shortcut(request, (response) => {
        if (answered) return
        answered = true
        shortcutsInFlight--
        resumeIfRoom()
        if (call.cancelled) return
        send(response)
        endIfDone()
      })
      if (!taken && !answered) shortcutsInFlight--
      return taken
    }
    const runFiber = (request: I) => {
      const fiber = runner.runUnary(Effect.suspend(() => handler(request, info)))
      inFlight.add(fiber)
      fiber.addObserver((exit) => {
        inFlight.delete(fiber)
        resumeIfRoom()
        if (call.cancelled) return
        if (Exit.isSuccess(exit)) send(exit.value)
        else if (!Cause.isInterruptedOnly(exit.cause)) {
          // A session handler cannot fail, so this is a defect: the request stays unanswered (the client's
          // deadline ends it) and the cause goes to the log.
          runner.runUnary(
            Effect.logError(`gRPC ${info.method}: a request died`, exit.cause).pipe(
              Effect.annotateLogs({ peer: info.peer })
            )
          )
        }
        endIfDone()
      })
    }
    const take = (request: I) => {
      if (!tryShortcut(request)) runFiber(request)
    }
    call.on("data", (message: unknown) => {
      if (shuttingDown) return
      if (frames === undefined) take(message as I)
      else for (const request of frames.requests(message)) take(request)
      if (inFlightCount() >= MAX_SESSION_IN_FLIGHT) call.pause()
    })
    call.once("end", () => {
      halfClosed = true
      endIfDone()
    })
    call.once("cancelled", () => {
      ended = true
      session.unsafeInterruptAsFork(FiberId.none)
      for (const fiber of inFlight) fiber.unsafeInterruptAsFork(FiberId.none)
    })
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
