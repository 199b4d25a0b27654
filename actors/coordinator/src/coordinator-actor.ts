/**
 * The coordinator actor: worker reports and object requests in over NATS, each batch fed to the driver in one
 * call; asks for an object the coordinator holds (the initial value of a key no worker owns yet).
 */
import { defineActor, type Handler, onAsk, onTellBatch } from "@reef/kernel"
import { EpochReport, ObjectRequest, WorkerReport } from "@reef/proto"
import { COORDINATOR_ROLE, PeekObjectRpc } from "@reef/remora/shell"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { CoordinatorDriver } from "./coordinator-driver.js"

const withDriver = <A>(state: Ref.Ref<CoordinatorDriver>, f: (driver: CoordinatorDriver) => A) =>
  Effect.flatMap(Ref.get(state), (driver) => Effect.sync(() => f(driver)))

export const coordinatorActor = (driver: CoordinatorDriver) =>
  defineActor<CoordinatorDriver>({
    role: COORDINATOR_ROLE,
    description: "Remora coordinator: orders, schedules and dispatches transactions to workers",
    mailboxCapacity: 8192,
    // The driver outlives a handler crash: its state is the validator's (a restart would lose every version).
    initialState: Effect.succeed(driver),
    handlers: [
      onTellBatch(WorkerReport, (reports, { state }) => withDriver(state, (d) => d.onReports(reports))),
      onTellBatch(EpochReport, (reports, { state }) => withDriver(state, (d) => d.onEpochReports(reports))),
      onTellBatch(ObjectRequest, (requests, { state }) =>
        withDriver(state, (d) => {
          for (const r of requests) d.onObjectRequest(r.key, r.version, r.requester)
        })
      ),
      onAsk(PeekObjectRpc, (m: { readonly key: string }, { state }) =>
        withDriver(state, (d) => {
          const held = d.held(m.key)
          return held === undefined
            ? { held: false, version: 0, value: Buffer.alloc(0) }
            : { held: true, version: held.version, value: Buffer.from(held.value) }
        })
      )
    ] as ReadonlyArray<Handler<CoordinatorDriver, never>>
  })
