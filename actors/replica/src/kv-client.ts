/**
 * A client of a POPUC group's KV service, with the three deployment modes of the paper's §3.2:
 *   leader     every client sends to one replica (conic-l)
 *   balanced   requests spread round-robin over the replicas (conic-lb, a load balancer)
 *   colocated  each client uses its own replica (conic-us; the default)
 */
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js"
import { currentTraceparent, TRACEPARENT_HEADER } from "@reef/observability/tracing"
import {
  type CompareAndSetResponse,
  type DeleteResponse,
  type GetResponse,
  KVClient,
  type ReconfigureResponse,
  type SetResponse,
  type StateResponse
} from "@reef/proto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

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
      Effect.sync(() => options.replicas.map((address) => new KVClient(address, credentials.createInsecure()))),
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
                      code: error.code ?? 2,
                      details: error.details ?? error.message
                    })
                  )
            )
          )
        })
      )

    const toBuffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)
    return {
      set: (key, value) => call("Set", pick(), (c) => c.set, { key, value: toBuffer(value) }),
      get: (key) => call("Get", pick(), (c) => c.get, { key }),
      delete: (key) => call("Delete", pick(), (c) => c.delete, { key }),
      compareAndSet: (key, expected, value) =>
        call("CompareAndSet", pick(), (c) => c.compareAndSet, {
          key,
          expected: toBuffer(expected ?? new Uint8Array(0)),
          expectAbsent: expected === null,
          value: toBuffer(value)
        }),
      state: (replica) => call("State", replica, (c) => c.state, {}),
      reconfigure: (replica, members) => call("Reconfigure", replica, (c) => c.reconfigure, { members: [...members] })
    }
  })
