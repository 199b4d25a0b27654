/**
 * Remora for the cross-package tests, on a spawned nats-server: in one test process (a coordinator and workers,
 * each with its own kernel and NATS connection), or as real processes (`reef run coordinator`, `reef run
 * worker`) driven through reef.v1.Execution. Signed workloads and the reference executor's hash come from
 * @reef/coordinator.
 */
import {
  type ConsensusSource,
  type CoordinatorHandle,
  ExecutionCallError,
  makeExecutionClient,
  type RemoraClient,
  type RunCoordinatorOptions,
  runCoordinator,
  type Submitted
} from "@reef/coordinator"
import { inScope } from "@reef/devkit"
import { freePort, type Kernel, natsKernelLayer } from "@reef/kernel"
import type { CommitEvent, ExecutionState, Transaction } from "@reef/proto"
import { type RunWorkerOptions, runWorker, type WorkerHandle } from "@reef/worker"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { type ActorProcess, type Harness, startActorProcess } from "./harness.js"

export interface InProcessCluster {
  readonly coordinator: CoordinatorHandle
  readonly workers: ReadonlyArray<WorkerHandle>
  readonly commits: Array<CommitEvent>
  readonly close: () => Promise<void>
}

/** Starts a coordinator and `workers` workers in this process, each on its own kernel. */
export const startInProcessCluster = async (options: {
  readonly natsUrl: string
  readonly cluster: string
  readonly coordinator: RunCoordinatorOptions
  readonly consensus: Layer.Layer<ConsensusSource>
  readonly workers: ReadonlyArray<RunWorkerOptions>
}): Promise<InProcessCluster> => {
  const scopes: Array<Scope.CloseableScope> = []
  const kernel = (name: string) =>
    natsKernelLayer({ servers: options.natsUrl, name }, { cluster: options.cluster }) as Layer.Layer<Kernel>
  const workers: Array<WorkerHandle> = []
  for (const w of options.workers) {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    workers.push(await inScope(scope, kernel(`worker-${w.id}`), runWorker(w)))
  }
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const coordinator = await inScope(
    scope,
    Layer.merge(kernel("coordinator"), options.consensus),
    runCoordinator(options.coordinator)
  )
  const commits: Array<CommitEvent> = []
  coordinator.driver.watch((e) => commits.push(e))
  return {
    coordinator,
    workers,
    commits,
    close: async () => {
      for (const s of scopes.reverse()) await Effect.runPromise(Scope.close(s, Exit.void))
    }
  }
}

export interface RemoraProcesses {
  readonly coordinator: ActorProcess
  readonly workers: ReadonlyArray<ActorProcess>
  /** A client of the coordinator's reef.v1.Execution, living as long as the harness. */
  readonly client: RemoraClient
}

/**
 * `reef run coordinator --id x1` and `workers` × `reef run worker` as processes of their own; resolves once the
 * coordinator places work on every worker (or on `active` of them).
 */
export const startRemoraProcesses = async (
  harness: Harness,
  options: {
    readonly natsUrl: string
    readonly cluster: string
    readonly workers: number
    /** Workers the coordinator places work on once ready (fewer than `workers` with --autoscale: the rest are spares). */
    readonly active?: number
    readonly coordinatorArgs?: ReadonlyArray<string>
    readonly env?: Record<string, string>
  }
): Promise<RemoraProcesses> => {
  const port = await Effect.runPromise(freePort)
  const common = {
    natsUrl: options.natsUrl,
    cluster: options.cluster,
    ...(options.env === undefined ? {} : { env: options.env })
  }
  const [coordinator, ...workers] = await Promise.all([
    startActorProcess(harness, {
      role: "coordinator",
      id: "x1",
      ...common,
      extraArgs: [
        "--execution-port",
        String(port),
        // A test's cluster names repeat across runs: nothing on disk unless the test asks for a directory.
        ...(options.coordinatorArgs?.includes("--data-dir") ? [] : ["--in-memory"]),
        ...(options.coordinatorArgs ?? [])
      ]
    }),
    ...Array.from({ length: options.workers }, (_, i) =>
      startActorProcess(harness, {
        role: "worker",
        id: `w${i + 1}`,
        ...common,
        extraArgs: ["--coordinator", "x1", "--cores", "4"]
      })
    )
  ])
  const client = await harness.run(makeExecutionClient({ address: `127.0.0.1:${port}`, timeoutMs: 60_000 }))
  await Effect.runPromise(
    client.state.pipe(
      Effect.filterOrFail((s) => s.workers.length === (options.active ?? options.workers)),
      Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("30 seconds")))
    )
  )
  return { coordinator: coordinator!, workers, client }
}

/**
 * Submits `txs` over the client's framed Submit stream, at most `inFlight` unanswered at once; resolves with
 * every outcome by index (a broken stream or a missing receipt fails the whole run).
 */
export const submitAll = (
  client: RemoraClient,
  txs: ReadonlyArray<Transaction>,
  inFlight: number
): Promise<Array<Submitted>> =>
  new Promise((resolve, reject) => {
    const outcomes: Array<Submitted> = new Array(txs.length)
    let next = 0
    let done = 0
    const pump = () => {
      while (next < txs.length && next - done < inFlight) {
        const index = next++
        client.submitCallback(txs[index]!, (outcome) => {
          if (outcome instanceof ExecutionCallError) return reject(outcome)
          outcomes[index] = outcome
          if (++done === txs.length) resolve(outcomes)
          else pump()
        })
      }
    }
    if (txs.length === 0) resolve([])
    else pump()
  })

/** The coordinator's state once every committed transaction has executed and every worker answered. */
export const completeState = (client: RemoraClient): Promise<ExecutionState> =>
  Effect.runPromise(
    client.state.pipe(
      Effect.filterOrFail((s) => s.complete),
      Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("30 seconds")))
    )
  )
