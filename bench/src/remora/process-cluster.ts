/**
 * A Remora cluster of `reef run` processes for the bench's real-process figures: a spawned nats-server, a
 * coordinator (`x1`) serving reef.v1.Execution on a free port, and `reef run worker` children, all in one Scope
 * (closing it stops them); and a load from one gRPC client, at a fixed or changing rate (open loop) or with a fixed number in flight (closed loop), retrying
 * what the coordinator turns away as unavailable or overloaded, and hands each receipt back with its latency
 * from the first submission. Figs. 9 and 10 (fig9.ts, fig10.ts) run on it; a figure that kills or restarts
 * processes can spawn more with `child`.
 */
import type { ChildProcess } from "node:child_process"
import { ExecutionCallError, makeExecutionClient, type RemoraClient, type Submitted } from "@reef/coordinator"
import { startReefChild } from "@reef/devkit"
import { freePort, startNatsServer } from "@reef/kernel"
import { type Receipt, RejectReason, type Transaction } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"

export interface ProcessClusterOptions {
  /** The NATS cluster name (unique per run). */
  readonly cluster: string
  readonly workerIds: ReadonlyArray<string>
  /** More `reef run coordinator` options (the port, id, NATS and cluster are set here). */
  readonly coordinatorArgs: ReadonlyArray<string>
  /** More `reef run worker` options. */
  readonly workerArgs?: ReadonlyArray<string>
  /** Every line the coordinator prints (its log), with ms since the cluster began. */
  readonly onCoordinatorLine?: (atMs: number, line: string) => void
  /** A process of the cluster that exited without being stopped (a crash): its name, exit code or signal. */
  readonly onExit?: (name: string, code: number | null, signal: NodeJS.Signals | null) => void
  /** The gRPC client's deadline for a receipt (ms). */
  readonly clientTimeoutMs?: number
}

export interface ProcessCluster {
  readonly coordinator: ChildProcess
  readonly workers: ReadonlyMap<string, ChildProcess>
  readonly client: RemoraClient
  /** `host:port` of the coordinator's reef.v1.Execution. */
  readonly address: string
  /** Spawns one more `reef run <role> --id <id>` in the cluster (in the same scope). */
  readonly child: (role: string, id: string, extra: ReadonlyArray<string>) => Promise<ChildProcess>
}

const debug = (line: string) => {
  if (process.env.REMORA_BENCH_DEBUG) console.error(line)
}

/** Starts the cluster in `scope`; closing the scope stops every process and the client. */
export const startProcessCluster = async (
  options: ProcessClusterOptions,
  scope: Scope.Scope
): Promise<ProcessCluster> => {
  const inScope = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.extend(effect, scope))
  const nats = await inScope(startNatsServer({ jetstream: false }))
  const port = await Effect.runPromise(freePort)
  const address = `127.0.0.1:${port}`
  const began = performance.now()
  const child = (role: string, id: string, extra: ReadonlyArray<string>) =>
    inScope(
      startReefChild({
        name: `${role}/${id}`,
        args: ["run", role, "--id", id, "--nats", nats.url, "--cluster", options.cluster, ...extra],
        env: { OTEL_SDK_DISABLED: "true" },
        onExit: ({ code, signal }) => options.onExit?.(`${role}/${id}`, code, signal),
        onLine: (line) => {
          if (role === "coordinator") options.onCoordinatorLine?.(performance.now() - began, line)
          if (/WARN|ERROR/.test(line)) debug(`[${role}/${id}] ${line}`)
        }
      })
    )
  const coordinator = await child("coordinator", "x1", ["--execution-port", String(port), ...options.coordinatorArgs])
  const workers = new Map<string, ChildProcess>()
  for (const id of options.workerIds) {
    workers.set(id, await child("worker", id, ["--coordinator", "x1", ...(options.workerArgs ?? [])]))
  }
  const client = await inScope(makeExecutionClient({ address, timeoutMs: options.clientTimeoutMs ?? 120_000 }))
  return { coordinator, workers, client, address, child }
}

export interface LoadOptions {
  readonly client: RemoraClient
  /**
   * Open loop at `rateTps` (the schedule does not wait for receipts), or open loop at a rate that changes over
   * time (`dueBy`: transactions due so many ms after the start), or closed loop with `inFlight` transactions
   * outstanding (each answer submits the next).
   */
  readonly pace:
    | { readonly rateTps: number }
    | { readonly dueBy: (elapsedMs: number) => number }
    | { readonly inFlight: number }
  /** Transactions to submit in all (then the load stops submitting). */
  readonly total: number
  /** The n-th transaction (0-based). */
  readonly next: (n: number) => Transaction
  /** Each first submission: the transaction's index and ms since the load began. */
  readonly onSubmit?: (n: number, atMs: number) => void
  /** Each receipt: the transaction's index, ms since the load began, and latency from its first submission. */
  readonly onReceipt: (n: number, atMs: number, latencyMs: number, receipt: Receipt) => void
  /** A rejection that is no back-pressure (the transaction is not retried). */
  readonly onRejected?: (n: number, reason: RejectReason) => void
  /** Before retrying a turned-away submission (ms). */
  readonly retryMs?: number
}

export interface Load {
  readonly startedAt: number
  /**
   * Resolves once every transaction was submitted and answered, or once no answer came for `timeoutMs` (a
   * coordinator that died: then some were never submitted or never answered).
   */
  readonly done: (timeoutMs: number) => Promise<{ readonly answered: number; readonly submitted: number }>
  /** Stops submitting and retrying. */
  readonly stop: () => void
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Submits `total` transactions from one client, paced as `options.pace` says. */
export const runLoad = (options: LoadOptions): Load => {
  const startedAt = performance.now()
  let answered = 0
  let submitted = 0
  let stopped = false
  const retryMs = options.retryMs ?? 100
  const submit = (n: number, tx: Transaction, firstAt: number): void => {
    if (stopped) return
    options.client.submitCallback(tx, (o: Submitted | ExecutionCallError) => {
      const turnedAway =
        o instanceof ExecutionCallError ||
        (o._tag === "Rejected" &&
          (o.rejection.reason === RejectReason.REJECT_REASON_UNAVAILABLE ||
            o.rejection.reason === RejectReason.REJECT_REASON_OVERLOADED))
      if (turnedAway) {
        setTimeout(() => submit(n, tx, firstAt), retryMs)
        return
      }
      answered++
      const now = performance.now()
      if (o._tag === "Executed") options.onReceipt(n, now - startedAt, now - firstAt, o.receipt)
      else options.onRejected?.(n, o.rejection.reason)
      if ("inFlight" in options.pace) submitNext()
    })
  }
  const submitNext = () => {
    if (stopped || submitted >= options.total) return
    const n = submitted++
    const at = performance.now()
    options.onSubmit?.(n, at - startedAt)
    submit(n, options.next(n), at)
  }
  const pace = options.pace
  if ("inFlight" in pace) {
    for (let i = 0; i < pace.inFlight; i++) submitNext()
  } else {
    void (async () => {
      while (!stopped && submitted < options.total) {
        const elapsedMs = performance.now() - startedAt
        const due = Math.min(
          options.total,
          Math.floor("dueBy" in pace ? pace.dueBy(elapsedMs) : (elapsedMs / 1000) * pace.rateTps)
        )
        while (submitted < due) submitNext()
        await sleep(5)
      }
    })()
  }
  return {
    startedAt,
    stop: () => {
      stopped = true
    },
    done: async (timeoutMs) => {
      let seen = answered
      let lastProgress = performance.now()
      while (!(submitted === options.total && answered === submitted) && !stopped) {
        if (answered !== seen) {
          seen = answered
          lastProgress = performance.now()
        } else if (performance.now() - lastProgress > timeoutMs) break
        await sleep(20)
      }
      return { answered, submitted }
    }
  }
}
