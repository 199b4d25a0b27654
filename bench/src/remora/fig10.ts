/**
 * Fig. 10 of the Remora paper on real processes: placement following a hotspot that moves. A coordinator
 * (`reef run coordinator --policy P`) and three workers over a spawned nats-server (process-cluster.ts) take,
 * one after the other, two traces whose hot objects change every phase (actors/remora/src/workload/hotspot.ts):
 *
 * - `tpcc`: TPC-C NewOrder + Payment, half of the transactions on the phase's hot warehouse group (the paper:
 *   "50% of the transactions to warehouses on a single Worker", the workload changing every 20 s);
 * - `ethereum`: token transfers with steady hot contract accounts and a Zipf head that moves to other accounts
 *   each phase (the paper replays Ethereum mainnet blocks from different periods).
 *
 * Each twice from one gRPC client: offered at a fixed rate (open loop, the paper's set-up), so a phase is a fixed
 * stretch of time; then saturated (closed loop, a fixed number in flight), where throughput is what the placement
 * lets the cluster do and a phase is a fixed number of transactions. Each worker runs
 * stateful parts on one virtual core with a synthetic cost: three workers on a shared 2-core machine then
 * behave like three machines whose capacity placement can waste (a worker that ends up with every hot object
 * saturates while the others idle) or spend on lease transfers. Per phase: throughput (completions in the
 * phase's time window), p90 latency (first submission to receipt) and lease transfers (receipts'
 * `leaseTransfers`) of the phase's transactions.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  ed25519Signer,
  ethereumLikeSource,
  movingTpccSource,
  type PhasedSource,
  type PolicyName,
  Prng,
  signingKeyFromSeed,
  transactionStream
} from "@reef/remora"
import { percentile } from "@reef/stats"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { timelineOf } from "./fig8.js"
import { runLoad, startProcessCluster } from "./process-cluster.js"

export const FIG10_POLICIES: ReadonlyArray<PolicyName> = ["sfs", "round-robin", "locality"]
export const FIG10_WORKLOADS = ["tpcc", "ethereum"] as const
export type Fig10Workload = (typeof FIG10_WORKLOADS)[number]

/**
 * How a trace is offered: `offered`, open loop at `rateTps` with phases of `phaseSeconds` (the paper's
 * set-up: a fixed input rate below capacity); `saturated`, closed loop with `inFlight` transactions outstanding
 * and phases of `saturatedTxsPerPhase` transactions, so throughput is what the placement lets the cluster do.
 */
export const FIG10_MODES = ["offered", "saturated"] as const
export type Fig10Mode = (typeof FIG10_MODES)[number]

export interface Fig10Settings {
  readonly rateTps: number
  readonly phases: number
  readonly phaseSeconds: number
  readonly inFlight: number
  readonly saturatedTxsPerPhase: number
  /** Synthetic cost of a stateful part (µs) on a worker's virtual core. */
  readonly statefulCostUs: number
  /** Virtual cores per worker. */
  readonly cores: number
  /** How long to wait for the last receipts after the last submission (s). */
  readonly drainSeconds: number
}

export const fig10Settings = (quick: boolean): Fig10Settings =>
  quick
    ? {
        rateTps: 150,
        phases: 4,
        phaseSeconds: 4,
        inFlight: 96,
        saturatedTxsPerPhase: 400,
        statefulCostUs: 14_000,
        cores: 1,
        drainSeconds: 20
      }
    : {
        rateTps: 150,
        phases: 6,
        phaseSeconds: 6,
        inFlight: 96,
        saturatedTxsPerPhase: 800,
        statefulCostUs: 14_000,
        cores: 1,
        drainSeconds: 30
      }

/** Transactions per phase of a trace offered in `mode`. */
export const txsPerPhaseOf = (settings: Fig10Settings, mode: Fig10Mode): number =>
  mode === "offered" ? settings.rateTps * settings.phaseSeconds : settings.saturatedTxsPerPhase

/** What each trace is (fig10Source builds them). */
export const FIG10_TRACES: Readonly<Record<Fig10Workload, string>> = {
  tpcc: "TPC-C NewOrder:Payment 1:1, 12 warehouses, 50% on the phase's hot group of 4 (the rest uniform)",
  ethereum:
    "token transfers over 5,000 accounts, Zipf 0.9 with the rank → account rotation moved each phase, 4 hot contract accounts on 30% of transfers"
}

/** The traces (seeded), as FIG10_TRACES describes them. */
export const fig10Source = (
  workload: Fig10Workload,
  settings: Fig10Settings,
  txsPerPhase: number,
  prng: Prng
): PhasedSource<unknown> => {
  const costs = { statelessCostUs: 0, statefulCostUs: settings.statefulCostUs }
  if (workload === "tpcc") {
    const options = { ...costs, warehouses: 12, newOrderShare: 0.5, hotWarehouses: 4, hotShare: 0.5, txsPerPhase }
    return movingTpccSource(options, prng)
  }
  const options = {
    ...costs,
    accounts: 5_000,
    zipf: 0.9,
    maxAmount: 1_000,
    hotContracts: 4,
    hotContractShare: 0.3,
    txsPerPhase
  }
  return ethereumLikeSource(options, prng)
}

/** One receipt: when (ms since the load began), its latency, its lease transfers, its worker and its phase. */
export interface Fig10Completion {
  readonly at: number
  readonly latencyMs: number
  readonly leaseTransfers: number
  readonly worker: string
  readonly phase: number
}

export interface Fig10Phase {
  readonly phase: number
  /** The phase's time window (s since the load began). */
  readonly fromS: number
  readonly toS: number
  /** Completions within the phase's time window, per second. */
  readonly tps: number
  /** Of the phase's transactions (by submission), those answered: p50 and p90 latency (ms). */
  readonly p50Ms: number
  readonly p90Ms: number
  readonly leaseTransfers: number
  readonly transfersPerTx: number
  /** Share of the phase's transactions on the worker that ran the most of them. */
  readonly busiestWorkerShare: number
  readonly answered: number
}

export interface Fig10Run {
  readonly policy: PolicyName
  readonly workload: Fig10Workload
  readonly mode: Fig10Mode
  readonly phases: ReadonlyArray<Fig10Phase>
  /** Per 250 ms of completion time: throughput and p90 (fig8.ts's buckets). */
  readonly timeline: ReadonlyArray<{ readonly t: number; readonly tps: number; readonly p90Ms: number }>
  /** Over the phases after the first (the hotspot has moved at least once): the run's headline numbers. */
  readonly movedTps: number
  readonly movedP90Ms: number
  readonly movedTransfersPerTx: number
  readonly submitted: number
  readonly answered: number
  /** Transactions the coordinator refused outright (not back-pressure): none expected. */
  readonly refused: number
  /** Recoveries the coordinator logged (none expected: a starved process taken for gone would show here). */
  readonly recoveries: number
  /** Processes of the cluster that exited by themselves so far (none expected; the run is void if any). */
  readonly crashes: ReadonlyArray<string>
}

const p = (xs: ReadonlyArray<number>, q: number) => (xs.length === 0 ? Number.NaN : percentile(xs, q))

/**
 * The phases' time windows (ms since the load began). Offered: fixed, `phaseSeconds` each. Saturated: from the
 * first submission of a phase's transactions to the first of the next phase's (the last one to `endMs`).
 */
export const phaseWindows = (
  mode: Fig10Mode,
  settings: Fig10Settings,
  firstSubmitMs: ReadonlyArray<number>,
  endMs: number
): Array<readonly [number, number]> =>
  Array.from({ length: settings.phases }, (_, phase) =>
    mode === "offered"
      ? ([phase * settings.phaseSeconds * 1000, (phase + 1) * settings.phaseSeconds * 1000] as const)
      : ([firstSubmitMs[phase] ?? endMs, firstSubmitMs[phase + 1] ?? endMs] as const)
  )

/** Per phase: throughput by completion time within its window; latency, transfers and spread by the tx's phase. */
export const phaseStats = (
  completions: ReadonlyArray<Fig10Completion>,
  windows: ReadonlyArray<readonly [number, number]>
): Array<Fig10Phase> =>
  windows.map(([from, to], phase) => {
    const inWindow = completions.filter((c) => c.at >= from && c.at < to).length
    const own = completions.filter((c) => c.phase === phase)
    const latencies = own.map((c) => c.latencyMs)
    const transfers = own.reduce((sum, c) => sum + c.leaseTransfers, 0)
    const perWorker = new Map<string, number>()
    for (const c of own) perWorker.set(c.worker, (perWorker.get(c.worker) ?? 0) + 1)
    const busiest = Math.max(0, ...perWorker.values())
    return {
      phase,
      fromS: from / 1000,
      toS: to / 1000,
      tps: to > from ? (inWindow * 1000) / (to - from) : Number.NaN,
      p50Ms: p(latencies, 50),
      p90Ms: p(latencies, 90),
      leaseTransfers: transfers,
      transfersPerTx: own.length === 0 ? Number.NaN : transfers / own.length,
      busiestWorkerShare: own.length === 0 ? Number.NaN : busiest / own.length,
      answered: own.length
    }
  })

/** The headline of a run: over the phases after the first, median phase throughput, p90, transfers per tx. */
export const movedSummary = (
  completions: ReadonlyArray<Fig10Completion>,
  phases: ReadonlyArray<Fig10Phase>
): { readonly movedTps: number; readonly movedP90Ms: number; readonly movedTransfersPerTx: number } => {
  const later = completions.filter((c) => c.phase >= 1)
  const tps = phases.slice(1).map((q) => q.tps)
  return {
    movedTps: p(tps, 50),
    movedP90Ms: p(
      later.map((c) => c.latencyMs),
      90
    ),
    movedTransfersPerTx:
      later.length === 0 ? Number.NaN : later.reduce((sum, c) => sum + c.leaseTransfers, 0) / later.length
  }
}

const trace = (line: string) => {
  if (process.env.REMORA_BENCH_DEBUG) console.error(`[fig10] ${line}`)
}

/**
 * One fresh cluster with `policy`: each workload's trace offered, then each saturated (fresh traces of the same
 * workloads, on the objects the offered ones left), one after the other; the same traces for any policy.
 */
export const runFig10Cluster = async (
  policy: PolicyName,
  seed: number,
  settings: Fig10Settings
): Promise<ReadonlyArray<Fig10Run>> => {
  const scope = Effect.runSync(Scope.make())
  const dataDir = await mkdtemp(join(tmpdir(), "reef-bench-fig10-"))
  const log: Array<string> = []
  const crashes: Array<string> = []
  // Interrupted (Ctrl-C, a timeout's SIGTERM): stop the cluster's processes before exiting, leaving none behind.
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`bench remora --fig10: ${signal}, stopping the cluster it started`)
    void Effect.runPromise(Scope.close(scope, Exit.void)).finally(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  try {
    const cluster = await startProcessCluster(
      {
        cluster: `fig10-${policy}-${seed}`,
        workerIds: ["w1", "w2", "w3"],
        // Fault-free: no stall backstop (a starved process is not a lost message); the log is on disk as usual.
        coordinatorArgs: [
          "--policy",
          policy,
          "--seed",
          String(seed),
          "--window-ms",
          "100",
          "--data-dir",
          dataDir,
          "--stall-recovery-ms",
          "0"
        ],
        workerArgs: ["--cores", String(settings.cores)],
        onCoordinatorLine: (_at, line) => log.push(line),
        onExit: (name, code, signal) => {
          crashes.push(`${name} exited (${code ?? signal})`)
          console.error(`[fig10] ${name} exited (${code ?? signal}); the coordinator's last lines:`)
          for (const line of log.slice(-15)) console.error(`  ${line}`)
        }
      },
      scope
    )
    trace(`${policy} seed ${seed}: processes up`)
    const out: Array<Fig10Run> = []
    for (const mode of FIG10_MODES) {
      for (const workload of FIG10_WORKLOADS) {
        // A process of the cluster died: what is left would measure retries against nothing.
        if (crashes.length > 0) break
        const random = new Prng(seed * 31 + FIG10_WORKLOADS.indexOf(workload) + (mode === "offered" ? 0 : 7))
        const txsPerPhase = txsPerPhaseOf(settings, mode)
        const source = fig10Source(workload, settings, txsPerPhase, random.fork())
        const stream = transactionStream(
          source,
          ed25519Signer(signingKeyFromSeed(new Uint8Array(32).fill(10))),
          random.fork(),
          0,
          `f10-${workload}-${mode}-${seed}-`
        )
        const completions: Array<Fig10Completion> = []
        const firstSubmitMs: Array<number> = []
        let refused = 0
        const recoveriesBefore = log.filter((l) => /recovery after/.test(l)).length
        const load = runLoad({
          client: cluster.client,
          pace: mode === "offered" ? { rateTps: settings.rateTps } : { inFlight: settings.inFlight },
          total: txsPerPhase * settings.phases,
          next: () => stream().tx,
          onSubmit: (n, at) => {
            if (n % txsPerPhase === 0) firstSubmitMs.push(at)
          },
          onReceipt: (n, at, latencyMs, receipt) =>
            completions.push({
              at,
              latencyMs,
              leaseTransfers: receipt.leaseTransfers,
              worker: receipt.worker,
              phase: source.phaseOf(n)
            }),
          onRejected: () => refused++
        })
        const { answered, submitted } = await load.done(settings.drainSeconds * 1000)
        load.stop()
        const endMs = Math.max(0, ...completions.map((c) => c.at))
        const windows = phaseWindows(mode, settings, firstSubmitMs, endMs)
        const phases = phaseStats(completions, windows)
        const run: Fig10Run = {
          policy,
          workload,
          mode,
          phases,
          timeline: timelineOf(completions, windows.at(-1)![1]),
          ...movedSummary(completions, phases),
          submitted,
          answered,
          refused,
          recoveries: log.filter((l) => /recovery after/.test(l)).length - recoveriesBefore,
          crashes: [...crashes]
        }
        out.push(run)
        trace(
          `${policy} ${workload} ${mode}: ${answered}/${submitted} answered, phases ${phases.map((q) => `${q.tps.toFixed(0)} tx/s p90 ${q.p90Ms.toFixed(0)} ms ${q.transfersPerTx.toFixed(2)} tr/tx ${q.busiestWorkerShare.toFixed(2)} busiest`).join("; ")}`
        )
      }
    }
    return out
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await rm(dataDir, { recursive: true, force: true })
  }
}
