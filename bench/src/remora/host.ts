/**
 * One process of the Remora benchmark: a worker host or the coordinator host. It lives for the whole run and
 * takes commands on stdin (one JSON object a line), answering each with one JSON line on stdout:
 *
 * - worker host: `{ op: "start", cluster, id, cores }` starts a real worker actor (runWorker) on a kernel of its
 *   own in that cluster; `{ op: "stop" }` stops it. Each configuration of the benchmark is a fresh cluster, so
 *   nothing a worker held leaks into the next one.
 * - coordinator host: `{ op: "run", experiment }` starts a real coordinator (runCoordinator, window consensus)
 *   in the experiment's cluster, waits for its workers, drives the load in-process and answers the numbers.
 * - both: `{ op: "memory" }` answers RSS now and at peak.
 *
 *   node bench/dist/remora/host.js '{"natsUrl":"nats://..."}'
 */
import { createInterface } from "node:readline"
import { runWorker } from "@reef/worker"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { type Experiment, runExperiment } from "./experiment.js"
import { inScope, kernelFor, memoryMb } from "./kernel-scope.js"

const { natsUrl } = JSON.parse(process.argv[2] ?? "{}") as { readonly natsUrl: string }

export type HostCommand =
  | { readonly op: "start"; readonly cluster: string; readonly id: string; readonly cores: number }
  | { readonly op: "stop" }
  | { readonly op: "run"; readonly experiment: Experiment }
  | { readonly op: "memory" }

let current: Scope.CloseableScope | undefined

const stop = async () => {
  const scope = current
  current = undefined
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
}

const handle = async (command: HostCommand): Promise<unknown> => {
  switch (command.op) {
    case "start": {
      await stop()
      const scope = Effect.runSync(Scope.make())
      current = scope
      await inScope(
        scope,
        kernelFor(natsUrl, command.cluster, `worker-${command.id}`),
        runWorker({ id: command.id, cores: command.cores, coordinator: "c" })
      )
      return { started: command.id }
    }
    case "stop":
      await stop()
      return { stopped: true }
    case "run":
      return runExperiment(natsUrl, command.experiment)
    case "memory":
      return memoryMb()
  }
}

// Commands run one at a time, in order.
let queue = Promise.resolve()
createInterface({ input: process.stdin }).on("line", (line) => {
  queue = queue.then(async () => {
    let reply: unknown
    try {
      reply = { ok: true, value: await handle(JSON.parse(line) as HostCommand) }
    } catch (e) {
      reply = { ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`)
  })
})
process.stdin.on("end", () => {
  void queue.then(stop).finally(() => process.exit(0))
})
process.stdout.write(`${JSON.stringify({ ok: true, value: { ready: true } })}\n`)
