/**
 * A client of a coordinator's reef.v1.Execution: what `reef tx`, `reef up --workload`, the tests and benchmarks
 * use. `submit` goes over one framed `Submit` stream (the transactions issued in one turn of the event loop
 * leave as one SubmitFrame; a framed stream message costs a fraction of a unary call), and settles with the
 * transaction's rejection at once or its receipt once it executed. A broken stream fails what is in flight with
 * UNAVAILABLE (its outcome is unknown); the next submission opens a new stream. The other methods are unary.
 */
import { type ClientDuplexStream, Metadata, type ServiceError, status } from "@grpc/grpc-js"
import { grpcClientCredentials, MAX_SESSION_FRAME_BYTES } from "@reef/grpc"
import { TurnBatcher } from "@reef/kernel"
import {
  type CommitEvent,
  ExecutionClient,
  type ExecutionState,
  type GetObjectResponse,
  type GetReceiptResponse,
  type Receipt,
  type Rejection,
  type SubmitFrame,
  type SubmitReplies,
  type SubmitReply,
  type SubmitRequest,
  type SubmitTransactionResponse,
  type Transaction
} from "@reef/proto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

export class ExecutionCallError extends Data.TaggedError("ExecutionCallError")<{
  readonly method: string
  readonly address: string
  /** gRPC status code. */
  readonly code: number
  readonly details: string
}> {
  override get message() {
    return `${this.method} on the coordinator at ${this.address}: ${this.details} (code ${this.code})`
  }
}

/** What became of a submitted transaction. */
export type Submitted =
  | { readonly _tag: "Rejected"; readonly txId: string; readonly rejection: Rejection }
  | { readonly _tag: "Executed"; readonly txId: string; readonly receipt: Receipt }

export interface ExecutionClientOptions {
  /** `host:port` of the coordinator's reef.v1.Execution. */
  readonly address: string
  /** Deadline of unary calls, and of a submission's receipt. */
  readonly timeoutMs?: number
}

export interface RemoraClient {
  readonly address: string
  /** Over the Submit stream: the rejection at once, or the receipt once executed. */
  readonly submit: (tx: Transaction) => Effect.Effect<Submitted, ExecutionCallError>
  /** The same without a fiber per transaction, for load generators (`done` is called exactly once). */
  readonly submitCallback: (tx: Transaction, done: (outcome: Submitted | ExecutionCallError) => void) => void
  readonly submitTransaction: (
    tx: Transaction,
    waitForReceipt: boolean
  ) => Effect.Effect<SubmitTransactionResponse, ExecutionCallError>
  readonly getReceipt: (txId: string) => Effect.Effect<GetReceiptResponse, ExecutionCallError>
  readonly getObject: (key: string) => Effect.Effect<GetObjectResponse, ExecutionCallError>
  readonly state: Effect.Effect<ExecutionState, ExecutionCallError>
  /** Every block as it commits, from now on. */
  readonly watchCommits: Stream.Stream<CommitEvent, ExecutionCallError>
}

interface Waiter {
  readonly deadlineMs: number
  readonly done: (outcome: Submitted | ExecutionCallError) => void
}

interface SubmitStream {
  readonly call: ClientDuplexStream<SubmitFrame, SubmitReplies>
  readonly waiting: Map<number, Waiter>
  readonly outbox: TurnBatcher<SubmitRequest>
}

const requestBytes = (request: SubmitRequest): number =>
  48 + (request.transaction === undefined ? 0 : request.transaction.body.length + 96)

const outcomeOf = (reply: SubmitReply): Submitted | undefined =>
  reply.outcome?.$case === "rejected"
    ? { _tag: "Rejected", txId: reply.txId, rejection: reply.outcome.value }
    : reply.outcome?.$case === "receipt"
      ? { _tag: "Executed", txId: reply.txId, receipt: reply.outcome.value }
      : undefined

export const makeExecutionClient = (options: ExecutionClientOptions): Effect.Effect<RemoraClient, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { address } = options
    const timeoutMs = options.timeoutMs ?? 30_000
    // After the scope closed, calls fail with UNAVAILABLE instead of grpc-js throwing "Channel has been shut down"
    // into whoever called (a retry timer of a workload, long after).
    let closed = false
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => new ExecutionClient(address, grpcClientCredentials())),
      (c) =>
        Effect.sync(() => {
          closed = true
          c.close()
        })
    )
    const callError = (method: string, code: number, details: string) =>
      new ExecutionCallError({ method, address, code, details })

    let stream: SubmitStream | undefined
    let nextId = 1
    const open = (): SubmitStream => {
      const call = client.submit()
      const opened: SubmitStream = {
        call,
        waiting: new Map(),
        outbox: new TurnBatcher({
          flush: (requests) => call.write({ requests }),
          sizeOf: requestBytes,
          maxSize: MAX_SESSION_FRAME_BYTES
        })
      }
      const broken = (details: string) => {
        opened.outbox.clear()
        if (stream === opened) stream = undefined
        for (const w of opened.waiting.values()) w.done(callError("Submit", status.UNAVAILABLE, details))
        opened.waiting.clear()
      }
      call.on("data", (frame: SubmitReplies) => {
        for (const reply of frame.replies) {
          const waiter = opened.waiting.get(reply.id)
          if (waiter === undefined) continue
          opened.waiting.delete(reply.id)
          waiter.done(outcomeOf(reply) ?? callError("Submit", status.INTERNAL, `reply ${reply.id} has neither outcome`))
        }
      })
      call.on("error", (e: ServiceError) => broken(`stream broken: ${e.details || e.message}`))
      call.on("end", () => broken("stream ended by the coordinator"))
      stream = opened
      return opened
    }
    // Receipts that never come: one sweep instead of a timer per submission.
    const sweep = () => {
      if (stream === undefined) return
      const now = Date.now()
      for (const [id, w] of stream.waiting) {
        if (w.deadlineMs > now) continue
        stream.waiting.delete(id)
        w.done(callError("Submit", status.DEADLINE_EXCEEDED, `no receipt within ${timeoutMs} ms`))
      }
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => setInterval(sweep, Math.max(20, Math.min(500, timeoutMs / 4))).unref()),
      (timer) =>
        Effect.sync(() => {
          clearInterval(timer)
          stream?.outbox.flush()
          stream?.call.end()
        })
    )

    const submitCallback = (tx: Transaction, done: (outcome: Submitted | ExecutionCallError) => void) => {
      if (closed) {
        queueMicrotask(() => done(callError("Submit", status.UNAVAILABLE, "the client was closed")))
        return
      }
      const s = stream ?? open()
      const id = nextId++
      s.waiting.set(id, { deadlineMs: Date.now() + timeoutMs, done })
      s.outbox.add({ id, transaction: tx })
    }

    const unary = <I, O>(
      method: string,
      f: (
        request: I,
        metadata: Metadata,
        options: { deadline: number },
        callback: (error: ServiceError | null, response: O) => void
      ) => unknown,
      request: I
    ) =>
      Effect.async<O, ExecutionCallError>((resume) => {
        if (closed) return resume(Effect.fail(callError(method, status.UNAVAILABLE, "the client was closed")))
        f.call(client, request, new Metadata(), { deadline: Date.now() + timeoutMs }, (error, response) =>
          resume(
            error === null
              ? Effect.succeed(response)
              : Effect.fail(callError(method, error.code ?? status.UNKNOWN, error.details || error.message))
          )
        )
      })

    return {
      address,
      submitCallback,
      submit: (tx) =>
        Effect.async<Submitted, ExecutionCallError>((resume) =>
          submitCallback(tx, (o) => resume(o instanceof ExecutionCallError ? Effect.fail(o) : Effect.succeed(o)))
        ),
      submitTransaction: (tx, waitForReceipt) =>
        unary("SubmitTransaction", client.submitTransaction, { transaction: tx, waitForReceipt }),
      getReceipt: (txId) => unary("GetReceipt", client.getReceipt, { txId }),
      getObject: (key) => unary("GetObject", client.getObject, { key }),
      state: unary("GetExecutionState", client.getExecutionState, {}),
      watchCommits: Stream.asyncScoped<CommitEvent, ExecutionCallError>((emit) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            if (closed) {
              void emit.fail(callError("WatchCommits", status.UNAVAILABLE, "the client was closed"))
              return undefined
            }
            const call = client.watchCommits({})
            call.on("data", (e: CommitEvent) => void emit.single(e))
            call.on("error", (e: ServiceError) => {
              if (e.code !== status.CANCELLED) void emit.fail(callError("WatchCommits", e.code, e.details || e.message))
            })
            call.on("end", () => void emit.end())
            return call
          }),
          (call) => Effect.sync(() => call?.cancel())
        )
      )
    }
  })
