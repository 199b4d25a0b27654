/**
 * One configuration on the seeded simulator (`@reef/remora`'s runWorld): the real coordinator and worker cores
 * in this process, in virtual time, with a modelled network (a delay drawn per message) and the paper's own
 * service times on virtual cores. It measures scheduling, not this machine: nothing in it depends on how much
 * CPU the run gets. Signatures are modelled (the simulator's signer), not checked.
 *
 * Throughput is what completes in a window after a warm-up with a closed loop of clients keeping enough
 * transactions outstanding to saturate the configuration (so a hot key's backlog settles instead of growing
 * without bound); latency, from arrival at the coordinator to receipt for transactions that arrived in the window,
 * is measured under an open loop.
 */
import { type CoordinatorParams, defaultCoordinatorParams, runWorld, type YcsbOptions } from "@reef/remora"
import { percentile } from "@reef/stats"
import { round } from "../report.js"

export interface SimRun {
  readonly workers: number
  readonly cores: number
  readonly params: Partial<CoordinatorParams>
  readonly workload: YcsbOptions
  readonly windowMs: number
  readonly blockIntervalMs: number
  readonly maxBlockTxs: number
  /** One-way message delay, drawn uniformly in [lo, hi] ms. */
  readonly netDelayMs: readonly [number, number]
  /** Open loop: the offered load (tx/s of virtual time); closed loop: the transactions kept outstanding. */
  readonly load: { readonly perSecond: number } | { readonly outstanding: number; readonly maxTps: number }
  readonly warmupMs: number
  readonly measureMs: number
  /** Virtual time after the window for its transactions to finish (latency runs). */
  readonly drainMs: number
  readonly seed: number
}

export interface SimResult {
  readonly throughput: number
  readonly p50Ms: number
  readonly p90Ms: number
  readonly leaseTransfersPerTx: number
  readonly completed: number
  readonly crash: string | undefined
}

export const simRun = (r: SimRun): SimResult => {
  const endMs = r.warmupMs + r.measureMs
  const record = runWorld({
    scenario: "bench",
    seed: r.seed,
    workers: r.workers,
    lateWorkers: 0,
    joinAtMs: 0,
    cores: r.cores,
    ...("perSecond" in r.load
      ? { txs: Math.ceil((r.load.perSecond * endMs) / 1000), arrivalGapMs: 1000 / r.load.perSecond }
      : {
          txs: Math.ceil((r.load.maxTps * endMs) / 1000) + r.load.outstanding,
          // The clients start over the first half of the warm-up, not all at once in the first block.
          arrivalGapMs: r.warmupMs / 2 / r.load.outstanding,
          outstanding: r.load.outstanding
        }),
    workload: { kind: "ycsb", ...r.workload },
    invalidShare: 0,
    coordinator: { ...defaultCoordinatorParams, seed: r.seed, ...r.params },
    blockIntervalMs: r.blockIntervalMs,
    maxBlockTxs: r.maxBlockTxs,
    windowMs: r.windowMs,
    windowJitterMs: 0,
    rejectRate: 0,
    netDelayMs: r.netDelayMs,
    duplicateRate: 0,
    slowFactor: [],
    retryAfterMs: 1000,
    maxTimeMs: endMs + r.drainMs
  })
  let completed = 0
  const latencies: Array<number> = []
  for (const [seq, receipt] of record.receipts) {
    if (receipt.atMs >= r.warmupMs && receipt.atMs < endMs) completed++
    const arrived = record.arrivedAtMs.get(record.committed[seq - 1]?.id ?? "")
    if (arrived !== undefined && arrived >= r.warmupMs && arrived < endMs) latencies.push(receipt.atMs - arrived)
  }
  let transfers = 0
  for (const w of record.workers.values()) transfers += w.stats.leaseTransfersIn
  return {
    throughput: round(completed / (r.measureMs / 1000), 1),
    p50Ms: round(percentile(latencies, 50), 2),
    p90Ms: round(percentile(latencies, 90), 2),
    leaseTransfersPerTx: record.receipts.size === 0 ? 0 : round(transfers / record.receipts.size, 3),
    completed: record.receipts.size,
    crash: record.crash
  }
}
