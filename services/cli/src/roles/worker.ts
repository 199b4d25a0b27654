/**
 * `reef run worker`: a Remora worker. Executes the stateless and stateful parts of the transactions its
 * coordinator dispatches, on emulated virtual cores, and holds the objects it leased (a peer that needs one
 * fetches it over NATS: a lease transfer). `reef up` starts them with the coordinator (coordinator.ts).
 */
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { defineRole } from "./role.js"
import { ROLE_STATUS_COLUMNS } from "./status-columns.js"

export const workerRole = defineRole({
  role: "worker",
  summary: "Remora worker: executes dispatched transactions on virtual cores and holds leased objects",
  description:
    "Verifies signatures (the stateless part) as soon as tasks arrive, and runs a transaction's contract (the " +
    "stateful part) once every input version it was assigned is here, fetched from the hinted owner or the " +
    "coordinator. A task's synthetic cost occupies one of --cores virtual cores for that long, so many worker " +
    "processes on a small machine behave like separate machines; signatures and contracts always run for real. " +
    "With a coordinator that autoscales (--autoscale), a worker beyond its pool waits as a spare; one it retires " +
    "stops by itself (exit 0) once nothing needs it.",
  options: {
    cores: Opt.integer({ description: "virtual cores (tasks that run at once)", default: 4, min: 1, max: 1024 }),
    coordinator: Opt.token({
      description: "the coordinator's actor id (reports and object requests go there)",
      default: "x1"
    })
  },
  examples: ["reef run worker --id w4 --coordinator x1", "reef run worker --id w1 --cores 16"],
  start: (input, context) =>
    Effect.gen(function* () {
      const { runWorker } = yield* Effect.promise(() => import("@reef/worker"))
      yield* runWorker({
        id: context.id,
        cores: input.cores,
        coordinator: input.coordinator,
        // Retired (scale-in): stop as on SIGTERM (drain, leave presence, exit 0).
        onRetired: () => process.kill(process.pid, "SIGTERM")
      })
      return { description: `worker ${context.id} cores ${input.cores} coordinator ${input.coordinator}` }
    }),
  status: ROLE_STATUS_COLUMNS.worker
})
