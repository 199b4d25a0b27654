/**
 * Bidirectional methods are sessions (e.g. reef.v1.KV/Session): every client message is a request, handled
 * like a unary call on its own fiber, and answered by exactly one message as soon as it is done (replies are
 * not kept in request order, so they must carry the request's id). A session handler cannot fail: a request's
 * failure is part of its reply. A framed session carries several requests per message, and the replies
 * completed in one turn of the event loop leave as one message (a TurnBatcher).
 */
import type { ServerDuplexStream } from "@grpc/grpc-js"
import { TurnBatcher } from "@reef/kernel"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import { type CallInfo, type CallRunner, callInfo, statusObject } from "./call.js"
import { statusOfCause } from "./status.js"

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

const FramedSessionTypeId: unique symbol = Symbol.for("@reef/grpc/FramedSession")

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
    /** Replies completed in one turn of the event loop (framed sessions), written as one frame. */
    const replyFrames =
      frames &&
      new TurnBatcher<O>({
        flush: (replies) => {
          if (!call.cancelled) call.write(frames.replies(replies))
        },
        sizeOf: frames.replyBytes,
        maxSize: MAX_SESSION_FRAME_BYTES
      })
    const send = (reply: O) => (replyFrames === undefined ? void call.write(reply) : replyFrames.add(reply))
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
      replyFrames?.flush()
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
