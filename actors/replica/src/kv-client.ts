/**
 * A client of a POPUC group's KV service, with the three deployment modes of the paper's §3.2:
 *   leader     every client sends to one replica (conic-l)
 *   balanced   requests spread round-robin over the replicas (conic-lb, a load balancer)
 *   colocated  each client uses its own replica (conic-us; the default)
 *
 * Get/Set/Delete/CompareAndSet go over one reef.v1.KV/Session stream per replica by default: many requests in
 * flight, answered by id, at a fraction of a unary call's cost (a unary call is an HTTP/2 stream with headers
 * and trailers; measured here with grpc-js, ~200 µs of CPU per call against ~35 µs per session message). The
 * requests issued in one turn of the event loop go out as one frame (KvRequests), and the server answers in
 * frames too: gRPC's cost is per message.
 * `transport: "unary"` uses the unary methods instead. A broken session fails its requests in flight with
 * UNAVAILABLE (their outcome is unknown, as for a unary call whose connection broke); the next call opens a
 * new one.
 */
import { type ClientDuplexStream, Metadata, type ServiceError, status } from "@grpc/grpc-js"
import { grpcClientCredentials, MAX_SESSION_FRAME_BYTES } from "@reef/grpc"
import { TurnBatcher } from "@reef/kernel"
import { currentTraceparent, TRACEPARENT_HEADER } from "@reef/observability/tracing"
import {
  type CompareAndSetResponse,
  type DeleteResponse,
  type GetResponse,
  KVClient,
  type KvReplies,
  type KvReply,
  type KvRequest,
  type KvRequests,
  type ReconfigureResponse,
  type SetResponse,
  type StateResponse
} from "@reef/proto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { keyValueBytes } from "./kv-state.js"
import { isWellFormed } from "./strict-utf8.js"

export type DeploymentMode = "leader" | "balanced" | "colocated"

export class KvCallError extends Data.TaggedError("KvCallError")<{
  readonly method: string
  readonly replica: string
  /** gRPC status code. */
  readonly code: number
  readonly details: string
}> {
  override get message() {
    return `${this.method} on ${this.replica}: ${this.details} (code ${this.code})`
  }
}

export interface KvClientOptions {
  /** `host:port` of every replica's KV service, in replica order. */
  readonly replicas: ReadonlyArray<string>
  readonly mode?: DeploymentMode
  /** Which replica is "mine" in colocated mode. */
  readonly clientIndex?: number
  readonly timeoutMs?: number
  /** `session` (default): one pipelined stream per replica; `unary`: a gRPC call per request. */
  readonly transport?: "session" | "unary"
}

export interface KvClient {
  readonly set: (key: string, value: Uint8Array) => Effect.Effect<SetResponse, KvCallError>
  readonly get: (key: string) => Effect.Effect<GetResponse, KvCallError>
  readonly delete: (key: string) => Effect.Effect<DeleteResponse, KvCallError>
  readonly compareAndSet: (
    key: string,
    expected: Uint8Array | null,
    value: Uint8Array
  ) => Effect.Effect<CompareAndSetResponse, KvCallError>
  readonly state: (replica: number) => Effect.Effect<StateResponse, KvCallError>
  /** Asks `replica` to propose a new member list (decided through consensus). */
  readonly reconfigure: (
    replica: number,
    members: ReadonlyArray<string>
  ) => Effect.Effect<ReconfigureResponse, KvCallError>
}

type SessionOp = NonNullable<KvRequest["op"]>
type SessionResult = NonNullable<KvReply["result"]>
type ResultOf<C extends SessionOp["$case"]> = Extract<SessionResult, { $case: C }>["value"]

interface SessionWaiter {
  readonly method: string
  readonly deadlineMs: number
  readonly settle: (reply: KvReply | KvCallError) => void
}

/** One Session stream to one replica and the requests waiting on it. */
interface Session {
  readonly stream: ClientDuplexStream<KvRequests, KvReplies>
  readonly waiting: Map<number, SessionWaiter>
  /** Requests issued in this turn of the event loop, sent as one frame when it ends (or once it is large). */
  readonly outbox: TurnBatcher<KvRequest>
}

/** About how many bytes a request adds to its frame (frames stay under MAX_SESSION_FRAME_BYTES). */
const requestBytes = (request: KvRequest): number =>
  32 + (request.op === undefined ? 0 : keyValueBytes(request.op.value))

type Unary<I, O> = (
  request: I,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, response: O) => void
) => unknown

export const makeKvClient = (options: KvClientOptions): Effect.Effect<KvClient, never, Scope.Scope> =>
  Effect.gen(function* () {
    if (options.replicas.length === 0) return yield* Effect.dieMessage("a KV client needs at least one replica")
    const clients = yield* Effect.acquireRelease(
      Effect.sync(() => options.replicas.map((address) => new KVClient(address, grpcClientCredentials()))),
      (all) =>
        Effect.sync(() => {
          for (const c of all) c.close()
        })
    )
    const mode = options.mode ?? "colocated"
    const mine = (options.clientIndex ?? 0) % clients.length
    let next = 0
    const pick = (): number => {
      if (mode === "leader") return 0
      if (mode === "colocated") return mine
      next = (next + 1) % clients.length
      return next
    }
    const timeoutMs = options.timeoutMs ?? 10_000
    const callError = (method: string, replica: number, code: number, details: string) =>
      new KvCallError({ method, replica: options.replicas[replica]!, code, details })

    // ---- sessions -------------------------------------------------------------------------------------------
    const sessions: Array<Session | undefined> = options.replicas.map(() => undefined)
    let nextId = 1
    const openSession = (replica: number): Session => {
      const stream = clients[replica]!.session()
      const session: Session = {
        stream,
        waiting: new Map(),
        outbox: new TurnBatcher({
          flush: (requests) => stream.write({ requests }),
          sizeOf: requestBytes,
          maxSize: MAX_SESSION_FRAME_BYTES
        })
      }
      // A broken session is never picked again (`sessions` drops it), so its outbox stays empty from here on.
      const broken = (details: string) => {
        session.outbox.clear()
        if (sessions[replica] === session) sessions[replica] = undefined
        for (const waiter of session.waiting.values()) {
          waiter.settle(callError(waiter.method, replica, status.UNAVAILABLE, `session broken: ${details}`))
        }
        session.waiting.clear()
      }
      session.stream.on("data", (frame: KvReplies) => {
        for (const reply of frame.replies) {
          const waiter = session.waiting.get(reply.id)
          session.waiting.delete(reply.id)
          waiter?.settle(reply)
        }
      })
      session.stream.on("error", (error: ServiceError) => broken(error.details || error.message))
      session.stream.on("end", () => broken("session ended by the server"))
      sessions[replica] = session
      return session
    }
    // Deadlines of session requests: one sweep instead of a timer per request.
    const sweep = () => {
      const now = Date.now()
      sessions.forEach((session, replica) => {
        if (session === undefined) return
        for (const [id, waiter] of session.waiting) {
          if (waiter.deadlineMs > now) continue
          session.waiting.delete(id)
          waiter.settle(callError(waiter.method, replica, status.DEADLINE_EXCEEDED, "deadline exceeded"))
        }
      })
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => setInterval(sweep, Math.max(10, Math.min(250, timeoutMs / 4))).unref()),
      (timer) =>
        Effect.sync(() => {
          clearInterval(timer)
          for (const session of sessions) {
            if (session === undefined) continue
            // Requests issued in this very turn still go out before the stream ends.
            session.outbox.flush()
            session.stream.end()
          }
        })
    )

    const viaSession = <C extends SessionOp["$case"]>(method: string, replica: number, op: SessionOp & { $case: C }) =>
      Effect.flatMap(currentTraceparent, (traceparent) =>
        Effect.async<ResultOf<C>, KvCallError>((resume) => {
          const session = sessions[replica] ?? openSession(replica)
          const id = nextId++
          session.waiting.set(id, {
            method,
            deadlineMs: Date.now() + timeoutMs,
            settle: (reply) => {
              if (reply instanceof KvCallError) return resume(Effect.fail(reply))
              const result = reply.result
              if (result?.$case === op.$case) return resume(Effect.succeed(result.value as ResultOf<C>))
              resume(
                Effect.fail(
                  result?.$case === "error"
                    ? callError(method, replica, result.value.grpcCode, result.value.message)
                    : callError(method, replica, status.INTERNAL, `unexpected reply ${result?.$case ?? "(empty)"}`)
                )
              )
            }
          })
          session.outbox.add({ id, op, traceparent: Option.getOrElse(traceparent, () => "") })
          return Effect.sync(() => void session.waiting.delete(id))
        })
      )

    const call = <I, O>(method: string, replica: number, f: (c: KVClient) => Unary<I, O>, request: I) =>
      Effect.flatMap(currentTraceparent, (traceparent) =>
        Effect.async<O, KvCallError>((resume) => {
          const client = clients[replica]!
          const metadata = new Metadata()
          if (Option.isSome(traceparent)) metadata.set(TRACEPARENT_HEADER, traceparent.value)
          f(client).call(client, request, metadata, { deadline: Date.now() + timeoutMs }, (error, response) =>
            resume(
              error === null
                ? Effect.succeed(response)
                : Effect.fail(
                    new KvCallError({
                      method,
                      replica: options.replicas[replica]!,
                      code: error.code ?? status.UNKNOWN,
                      details: error.details ?? error.message
                    })
                  )
            )
          )
        })
      )

    const toBuffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)
    const casRequest = (key: string, expected: Uint8Array | null, value: Uint8Array) => ({
      key,
      expected: toBuffer(expected ?? new Uint8Array(0)),
      expectAbsent: expected === null,
      value: toBuffer(value)
    })
    const unary = options.transport === "unary"
    /**
     * A key with a lone surrogate cannot be sent as UTF-8 (the encoder would silently make it U+FFFD and so
     * another key): refused here, like the server refuses invalid UTF-8 (strict-utf8.ts).
     */
    const withKey = <A>(method: string, key: string, send: (replica: number) => Effect.Effect<A, KvCallError>) => {
      const replica = pick()
      return isWellFormed(key)
        ? send(replica)
        : Effect.fail(callError(method, replica, status.INVALID_ARGUMENT, "key: is not well-formed Unicode"))
    }
    return {
      set: (key, value) =>
        withKey("Set", key, (replica) =>
          unary
            ? call("Set", replica, (c) => c.set, { key, value: toBuffer(value) })
            : viaSession("Set", replica, { $case: "set", value: { key, value: toBuffer(value) } })
        ),
      get: (key) =>
        withKey("Get", key, (replica) =>
          unary
            ? call("Get", replica, (c) => c.get, { key })
            : viaSession("Get", replica, { $case: "get", value: { key } })
        ),
      delete: (key) =>
        withKey("Delete", key, (replica) =>
          unary
            ? call("Delete", replica, (c) => c.delete, { key })
            : viaSession("Delete", replica, { $case: "delete", value: { key } })
        ),
      compareAndSet: (key, expected, value) =>
        withKey("CompareAndSet", key, (replica) =>
          unary
            ? call("CompareAndSet", replica, (c) => c.compareAndSet, casRequest(key, expected, value))
            : viaSession("CompareAndSet", replica, {
                $case: "compareAndSet",
                value: casRequest(key, expected, value)
              })
        ),
      state: (replica) => call("State", replica, (c) => c.state, {}),
      reconfigure: (replica, members) => call("Reconfigure", replica, (c) => c.reconfigure, { members: [...members] })
    }
  })
