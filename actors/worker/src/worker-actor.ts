/**
 * The worker actor: NATS messages in (tasks from the coordinator, lease transfers and tokens from peers),
 * each batch fed to the driver in one call; asks for an object or the digest of what it holds.
 */
import { defineActor, type Handler, onAsk, onTell, onTellBatch } from "@reef/kernel"
import {
  EpochControl,
  Fence,
  ObjectRequest,
  ObjectTransfer,
  StatefulTask,
  StatelessTask,
  SymmetricBlock,
  TokenReply,
  TokenRequest,
  type Transaction,
  WorkerRetired
} from "@reef/proto"
import { COORDINATOR_SOURCE, type StatefulIn, type StatelessTaskData } from "@reef/remora"
import {
  PeekObjectRpc,
  StateDigestRpc,
  statefulFromWire,
  statelessFromWire,
  symmetricFromWire,
  WORKER_ROLE
} from "@reef/remora/shell"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { WorkerDriver } from "./worker-driver.js"

const withDriver = (state: Ref.Ref<WorkerDriver>, f: (driver: WorkerDriver) => void) =>
  Effect.flatMap(Ref.get(state), (driver) => Effect.sync(() => f(driver)))

/** Objects with this `from` are the coordinator's answers (ObjectTransfer.from names the sender). */
const sourceOf = (from: string) => (from === COORDINATOR_SOURCE ? COORDINATOR_SOURCE : from)

/** What the worker does once its coordinator retired it (scale-in): its shell stops the process. */
export type OnRetired = (reason: string) => void

export const workerActor = (
  makeDriver: Effect.Effect<WorkerDriver>,
  warn: (message: string) => void,
  onRetired: OnRetired
) =>
  defineActor<WorkerDriver>({
    role: WORKER_ROLE,
    description: "Remora worker: executes transactions, holds leased objects",
    // Dispatch batches are large; a deep mailbox lets a burst of blocks wait instead of turning into dead letters.
    mailboxCapacity: 8192,
    initialState: makeDriver,
    onStop: ({ state }) => withDriver(state, (d) => d.close()),
    handlers: [
      onTellBatch(StatelessTask, (messages, { state }) =>
        withDriver(state, (d) => {
          const tasks: Array<StatelessTaskData<Transaction>> = []
          for (const m of messages) {
            const t = statelessFromWire(m)
            if (typeof t === "string") warn(`malformed stateless task: ${t}`)
            else tasks.push(t)
          }
          d.feed({ _tag: "Stateless", tasks })
        })
      ),
      onTellBatch(StatefulTask, (messages, { state }) =>
        withDriver(state, (d) => {
          const tasks: Array<StatefulIn<Transaction>> = []
          for (const m of messages) {
            const t = statefulFromWire(m)
            if (typeof t === "string") warn(`malformed stateful task: ${t}`)
            else tasks.push(t)
          }
          d.feed({ _tag: "Stateful", tasks })
        })
      ),
      onTell(SymmetricBlock, (m, { state }) =>
        withDriver(state, (d) => {
          const block = symmetricFromWire(m)
          if (typeof block === "string") warn(`malformed symmetric block: ${block}`)
          else d.feed({ _tag: "Symmetric", block })
        })
      ),
      onTellBatch(ObjectRequest, (messages, { state }) =>
        withDriver(state, (d) => {
          for (const m of messages) {
            d.feed({
              _tag: "ObjectRequest",
              key: m.key,
              version: m.version,
              requester: m.requester,
              trace: m.traceparent,
              generation: m.generation
            })
          }
        })
      ),
      onTellBatch(ObjectTransfer, (messages, { state }) =>
        withDriver(state, (d) => {
          for (const m of messages) {
            d.feed({
              _tag: "ObjectArrived",
              key: m.key,
              version: m.version,
              value: m.missing ? undefined : m.value,
              from: sourceOf(m.from),
              // A peer's transfer counts only in the generation it was sent in.
              ...(m.from === COORDINATOR_SOURCE ? {} : { generation: m.generation })
            })
          }
        })
      ),
      onTellBatch(TokenRequest, (messages, { state }) =>
        withDriver(state, (d) => {
          for (const m of messages) d.feed({ _tag: "TokenRequest", txId: m.txId, requester: m.requester })
        })
      ),
      onTellBatch(TokenReply, (messages, { state }) =>
        withDriver(state, (d) => {
          for (const m of messages) d.feed({ _tag: "TokenArrived", txId: m.txId, valid: m.valid })
        })
      ),
      onTellBatch(Fence, (messages, { state }) =>
        withDriver(state, (d) => {
          for (const m of messages) d.feed({ _tag: "Fence", generation: m.generation })
        })
      ),
      onTellBatch(EpochControl, (messages, { state }) =>
        withDriver(state, (d) => {
          for (const m of messages) {
            if (m.reportEpoch > 0) d.feed({ _tag: "ReportEpoch", generation: m.generation, epoch: m.reportEpoch })
            if (m.persistedEpoch > 0) {
              d.feed({ _tag: "EpochPersisted", generation: m.generation, epoch: m.persistedEpoch })
            }
          }
        })
      ),
      // Only the incarnation retired stops: a newer process of this id (a spare again) ignores an old retirement.
      onTell(WorkerRetired, (m, { state }) =>
        withDriver(state, (d) => {
          if (m.incarnation === d.options.incarnation) onRetired(m.reason)
        })
      ),
      onAsk(PeekObjectRpc, (m: { readonly key: string }, { state }) =>
        Effect.map(Ref.get(state), (d) => d.peek(m.key))
      ),
      onAsk(StateDigestRpc, (_request, { state }) => Effect.map(Ref.get(state), (d) => d.digest()))
    ] as ReadonlyArray<Handler<WorkerDriver, never>>
  })
