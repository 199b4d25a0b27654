/**
 * reef.v1.Execution, served by the coordinator process. `Submit` is a framed session: every transaction of a
 * frame is admitted on its own (a bad one is answered with its rejection at once and never affects the others)
 * and answered again when it has executed; the replies completed in one turn leave as one frame. A submission
 * takes no fiber: the receipt comes from the driver's callback.
 */
import { framedSession, grpcService, type SessionFrames } from "@reef/grpc"
import { HandlerError, KernelConfig, Messenger } from "@reef/kernel"
import {
  type CommitEvent,
  ErrorCode,
  ExecutionService,
  type ExecutionState,
  type GetObjectResponse,
  type Receipt,
  RejectReason,
  type SubmitFrame,
  type SubmitReplies,
  type SubmitReply,
  type SubmitRequest,
  type SubmitTransactionResponse
} from "@reef/proto"
import { COORDINATOR_SOURCE, genesisValue, StateDigestSum, stateHashOf } from "@reef/remora"
import { PeekObjectRpc, StateDigestRpc, WORKER_ROLE } from "@reef/remora/shell"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type { CoordinatorDriver } from "./coordinator-driver.js"

/** Commit events a WatchCommits client may fall behind by before its stream ends (RESOURCE_EXHAUSTED). */
export const MAX_WATCH_BACKLOG = 4096

const fail = (code: ErrorCode, message: string) => new HandlerError({ code, message })

export const submitFrames: SessionFrames<SubmitFrame, SubmitReplies, SubmitRequest, SubmitReply> = {
  requests: (frame) => frame.requests,
  replies: (replies) => ({ replies }),
  replyBytes: (reply) =>
    64 +
    reply.txId.length +
    (reply.outcome?.$case === "rejected"
      ? reply.outcome.value.message.length
      : reply.outcome?.$case === "receipt"
        ? 96 + reply.outcome.value.detail.length + reply.outcome.value.blockDigest.length
        : 0)
}

const rejected = (id: number, txId: string, reason: RejectReason, message: string): SubmitReply => ({
  id,
  txId,
  outcome: { $case: "rejected", value: { reason, message } }
})

/** Admits one session request; `reply` is called once with its rejection or, later, its receipt. */
const submitOne = (driver: CoordinatorDriver, request: SubmitRequest, reply: (r: SubmitReply) => void): void => {
  if (request.transaction === undefined) {
    reply(rejected(request.id, "", RejectReason.REJECT_REASON_MALFORMED, "transaction: must be set"))
    return
  }
  const outcome = driver.submit(request.transaction, (receipt) =>
    reply({ id: request.id, txId: receipt.txId, outcome: { $case: "receipt", value: receipt } })
  )
  if (!outcome.accepted) {
    reply({ id: request.id, txId: outcome.txId, outcome: { $case: "rejected", value: outcome.rejection } })
  }
}

export const makeExecutionService = (driver: CoordinatorDriver) =>
  Effect.gen(function* () {
    const messenger = yield* Messenger
    const config = yield* KernelConfig
    const workerAddress = (id: string) => ({ cluster: config.cluster, role: WORKER_ROLE, id })

    const watchCommits = () =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const queue = yield* Effect.acquireRelease(
            Queue.bounded<CommitEvent | "overflow">(MAX_WATCH_BACKLOG + 1),
            Queue.shutdown
          )
          const unwatch = driver.watch((event) => {
            if (Option.getOrElse(queue.unsafeSize(), () => 0) >= MAX_WATCH_BACKLOG) queue.unsafeOffer("overflow")
            else queue.unsafeOffer(event)
          })
          yield* Effect.addFinalizer(() => Effect.sync(unwatch))
          return Stream.fromQueue(queue).pipe(
            Stream.mapEffect((e) =>
              e === "overflow"
                ? Effect.fail(fail(ErrorCode.ERROR_CODE_OVERLOADED, `watcher fell ${MAX_WATCH_BACKLOG} commits behind`))
                : Effect.succeed(e)
            )
          )
        })
      )

    const getObject = (key: string) =>
      Effect.gen(function* () {
        if (key === "") return yield* fail(ErrorCode.ERROR_CODE_INVALID_ARGUMENT, "key: must be set")
        const { owner, assignedVersion } = driver.owner(key)
        const base: GetObjectResponse = { key, version: 0, value: Buffer.alloc(0), owner, assignedVersion }
        if (owner === COORDINATOR_SOURCE) {
          const held = driver.held(key)
          return held === undefined
            ? { ...base, value: Buffer.from(genesisValue(key)) }
            : { ...base, version: held.version, value: Buffer.from(held.value) }
        }
        // The object may be in flight between two workers (a lease transfer): ask again for a little while.
        const peek = messenger.ask(workerAddress(owner), PeekObjectRpc, { key }, { timeoutMs: 2_000 }).pipe(
          Effect.mapError((e) => fail(ErrorCode.ERROR_CODE_UNAVAILABLE, `${owner}: ${e.message}`)),
          Effect.filterOrFail(
            (r) => r.held,
            () => fail(ErrorCode.ERROR_CODE_MOVING, `${key} is being transferred to ${owner}; retry`)
          )
        )
        const held = yield* peek.pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("2 seconds"))))
        return { ...base, version: held.version, value: held.value }
      })

    const executionState = Effect.gen(function* () {
      // The digests are asked one by one and answered at the workers' own moments: the sum is a state only if
      // nothing ran meanwhile (idle before the asks and after, no completion, no fence in between).
      const before = {
        idle: driver.idle,
        completed: driver.core.stats.completed,
        generation: driver.core.generation,
        // A retirement moves a worker's objects to the coordinator: a sum across one would miss or repeat them.
        scaleIns: driver.counters.scaleIns
      }
      const workers = driver.workers
      const digests = yield* Effect.forEach(
        workers,
        (w) => Effect.either(messenger.ask(workerAddress(w), StateDigestRpc, {}, { timeoutMs: 5_000 })),
        { concurrency: "unbounded" }
      )
      const sum = new StateDigestSum()
      // Objects the coordinator owns again after a recovery (their persisted versions) are part of the state.
      for (const o of driver.heldObjects()) sum.add(o.key, o.version, o.value)
      // Complete only when every worker answered at the current fence generation: one that has not taken the
      // last fence yet still holds objects a recovery took back (a key would count twice).
      let answered = 0
      for (const d of digests) {
        if (d._tag === "Right") {
          sum.merge(d.right)
          if (d.right.generation === driver.core.generation) answered++
        }
      }
      const digest = sum.toProto()
      const stats = driver.core.stats
      const state: ExecutionState = {
        accepted: driver.counters.accepted,
        rejected: driver.counters.rejected,
        committed: driver.counters.committed,
        completed: driver.counters.completed,
        blocks: driver.counters.blocks,
        plansAdopted: stats.plansAdopted,
        plansRecomputed: stats.plansRecomputed,
        blocksRejected: stats.rejected,
        workers: [...workers],
        digest,
        complete:
          before.idle &&
          driver.idle &&
          driver.core.stats.completed === before.completed &&
          driver.core.generation === before.generation &&
          driver.counters.scaleIns === before.scaleIns &&
          answered === workers.length,
        stateHash: stateHashOf(digest),
        consensus: driver.consensus.description,
        pool: driver.poolView().map((m) => ({
          worker: m.worker,
          incarnation: m.incarnation,
          state: m.state,
          loadUs: m.loadUs
        })),
        scaleOuts: driver.counters.scaleOuts,
        scaleIns: driver.counters.scaleIns
      }
      return state
    })

    return grpcService(ExecutionService, {
      submit: framedSession(submitFrames, {
        answer: (request: SubmitRequest) =>
          Effect.async<SubmitReply>((resume) => submitOne(driver, request, (r) => resume(Effect.succeed(r)))),
        shortcut: (request: SubmitRequest, reply: (r: SubmitReply) => void) => {
          submitOne(driver, request, reply)
          return true
        }
      }),
      submitTransaction: (request) =>
        Effect.async<SubmitTransactionResponse>((resume) => {
          if (request.transaction === undefined) {
            return resume(
              Effect.succeed({
                txId: "",
                outcome: {
                  $case: "rejected",
                  value: { reason: RejectReason.REJECT_REASON_MALFORMED, message: "transaction: must be set" }
                }
              })
            )
          }
          const onReceipt = (receipt: Receipt) =>
            resume(Effect.succeed({ txId: receipt.txId, outcome: { $case: "receipt", value: receipt } }))
          const outcome = driver.submit(request.transaction, request.waitForReceipt ? onReceipt : undefined)
          if (!outcome.accepted) {
            resume(Effect.succeed({ txId: outcome.txId, outcome: { $case: "rejected", value: outcome.rejection } }))
          } else if (!request.waitForReceipt) {
            resume(Effect.succeed({ txId: outcome.txId, outcome: { $case: "accepted", value: true } }))
          }
        }),
      getReceipt: (request) =>
        Effect.suspend(() => {
          const found = driver.receipts.lookup(request.txId)
          if (found === undefined)
            return Effect.fail(
              fail(
                ErrorCode.ERROR_CODE_NOT_FOUND,
                `no transaction "${request.txId}" was accepted (or its receipt is no longer kept)`
              )
            )
          return Effect.succeed(found === "pending" ? { pending: true } : { receipt: found, pending: false })
        }),
      watchCommits: () => watchCommits(),
      getObject: (request) => getObject(request.key),
      getExecutionState: () => executionState
    })
  })
