/**
 * One configuration of the Remora benchmark, run inside the coordinator host: a real coordinator
 * (runCoordinator: mempool, window consensus, core, batched tells over NATS) in a fresh cluster whose workers
 * are the worker hosts' actors, and a load driven in-process through the driver (what the Execution service's
 * Submit stream calls per transaction), so the client's gRPC cost is not part of what is measured.
 *
 * Loads:
 * - `saturate`: an open loop offering more than the configuration can execute; what completes in a window
 *   after a warm-up is its throughput (the paper's "max achieved throughput");
 * - `rate`: open loop at a fixed rate; latency from submission to receipt, percentiles over the window;
 * - `burst`: `txs` transactions admitted at once, then timed until every one has executed and its receipt is
 *   back (the coordinator's rate, admission included), with the coordinator process's CPU time per transaction.
 */
import { type CoordinatorHandle, runCoordinator, windowConsensusLayer } from "@reef/coordinator"
import { type Receipt, type Transaction, TxStatus } from "@reef/proto"
import {
  bodySource,
  type CoordinatorParams,
  ed25519Signer,
  Prng,
  signingKeyFromSeed,
  transactionStream,
  type YcsbOptions
} from "@reef/remora"
import { percentile } from "@reef/stats"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { round } from "../report.js"
import { inScope, kernelFor, memoryMb } from "./kernel-scope.js"

export type Load =
  | {
      readonly kind: "saturate"
      /** Offered load: above the configuration's capacity. */
      readonly perSecond: number
      readonly warmupMs: number
      readonly measureMs: number
    }
  | {
      readonly kind: "rate"
      readonly perSecond: number
      readonly warmupMs: number
      readonly measureMs: number
    }
  | { readonly kind: "burst"; readonly txs: number }

export interface Experiment {
  readonly cluster: string
  readonly workers: number
  readonly params: Partial<CoordinatorParams>
  readonly windowMs: number
  readonly blockIntervalMs: number
  readonly maxBlockTxs: number
  readonly workload: YcsbOptions
  readonly load: Load
  /**
   * Coordinator options beyond the defaults. Fault-free runs turn the stall backstop off (`stallRecoveryMs` 0,
   * the default here): a starved process looks stalled, and the recovery it starts rolls every worker back.
   */
  readonly coordinator?: { readonly stallRecoveryMs?: number; readonly epochMs?: number }
}

export interface ExperimentResult {
  readonly throughput: number
  readonly completed: number
  readonly p50Ms: number
  readonly p90Ms: number
  readonly p99Ms: number
  readonly leaseTransfersPerTx: number
  readonly invalid: number
  readonly aborted: number
  readonly plansAdopted: number
  readonly plansRecomputed: number
  readonly blocks: number
  readonly dispatched: number
  /**
   * burst: completed transactions (receipt back) per CPU-second of this process, from the first admission to the
   * last receipt (admission, proposal, planning, dispatch and receipts all counted).
   */
  readonly dispatchTps: number
  /** burst: completed transactions per wall-clock second, from the first admission to the last receipt. */
  readonly wallDispatchTps: number
  /** burst: transactions admitted into the pool per CPU-second. */
  readonly admissionTps: number
  /** burst: transactions the pool refused at admission (they get no receipt and are not counted). */
  readonly refused?: number
  /** burst: coordinator process CPU (user + system) per completed transaction, admission included, µs. */
  readonly cpuUsPerTx: number
  readonly exhausted: boolean
  readonly rssMb: number
  readonly peakRssMb: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Signed workloads by spec, drawn once and reused by every configuration that runs the same spec. */
const workloads = new Map<string, { readonly txs: Array<Transaction>; readonly next: () => Transaction }>()

const signedTxs = (spec: YcsbOptions, count: number): ReadonlyArray<Transaction> => {
  const id = JSON.stringify(spec)
  let w = workloads.get(id)
  if (w === undefined) {
    const prng = new Prng(42)
    const key = signingKeyFromSeed(new Uint8Array(32).fill(7))
    const next = transactionStream(bodySource({ kind: "ycsb", ...spec }, prng.fork()), ed25519Signer(key), prng, 0, "t")
    w = { txs: [], next: () => next().tx }
    workloads.set(id, w)
  }
  while (w.txs.length < count) w.txs.push(w.next())
  return w.txs
}

const waitFor = async (condition: () => boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(5)
  }
}

interface Tally {
  completed: number
  invalid: number
  aborted: number
  transfers: number
}

const tallyReceipt = (t: Tally, r: Receipt) => {
  t.completed++
  t.transfers += r.leaseTransfers
  if (r.status === TxStatus.TX_STATUS_INVALID_SIGNATURE) t.invalid++
  else if (r.status === TxStatus.TX_STATUS_ABORTED) t.aborted++
}

/** Offers `perSecond` (above what the system can execute) and counts what completes in the window. */
const saturate = async (
  handle: CoordinatorHandle,
  txs: ReadonlyArray<Transaction>,
  load: Load & { kind: "saturate" }
) => {
  const driver = handle.driver
  const done: Array<number> = []
  const tally: Tally = { completed: 0, invalid: 0, aborted: 0, transfers: 0 }
  const start = performance.now()
  let next = 0
  const offer = () => {
    const due = Math.min(txs.length, Math.floor(((performance.now() - start) / 1000) * load.perSecond))
    while (next < due) {
      driver.submit(txs[next++]!, (r) => {
        done.push(performance.now())
        tallyReceipt(tally, r)
      })
    }
  }
  const timer = setInterval(offer, 2)
  await sleep(load.warmupMs + load.measureMs)
  clearInterval(timer)
  const from = start + load.warmupMs
  const to = from + load.measureMs
  const inWindow = done.filter((t) => t >= from && t < to).length
  return { throughput: inWindow / (load.measureMs / 1000), tally, exhausted: next >= txs.length, latencies: [] }
}

const openLoop = async (handle: CoordinatorHandle, txs: ReadonlyArray<Transaction>, load: Load & { kind: "rate" }) => {
  const driver = handle.driver
  const latencies: Array<number> = []
  const tally: Tally = { completed: 0, invalid: 0, aborted: 0, transfers: 0 }
  const start = performance.now()
  const from = start + load.warmupMs
  const to = from + load.measureMs
  let measured = 0
  let next = 0
  const submit = () => {
    const due = Math.min(txs.length, Math.floor(((performance.now() - start) / 1000) * load.perSecond))
    while (next < due) {
      const at = performance.now()
      const counted = at >= from && at < to
      const outcome = driver.submit(txs[next++]!, (r) => {
        tallyReceipt(tally, r)
        if (counted) latencies.push(performance.now() - at)
      })
      if (counted && outcome.accepted) measured++
    }
  }
  const timer = setInterval(submit, 1)
  await sleep(load.warmupMs + load.measureMs)
  clearInterval(timer)
  await waitFor(() => latencies.length >= measured, 30_000, "the measured transactions' receipts")
  return { throughput: measured / (load.measureMs / 1000), tally, exhausted: next >= txs.length, latencies }
}

/**
 * `txs` admitted at once, timed until every one has executed and its receipt is back (not merely dispatched):
 * the coordinator process's CPU over all of it (admission, proposal, planning, dispatch, receipts) per
 * completed transaction, and the wall time.
 */
const burst = async (handle: CoordinatorHandle, txs: ReadonlyArray<Transaction>) => {
  const driver = handle.driver
  const tally: Tally = { completed: 0, invalid: 0, aborted: 0, transfers: 0 }
  const cpu = process.cpuUsage()
  const started = performance.now()
  // Only an admitted transaction gets a receipt; one the pool refuses is counted apart.
  let accepted = 0
  for (const tx of txs) if (driver.submit(tx, (r) => tallyReceipt(tally, r)).accepted) accepted++
  const admitUsed = process.cpuUsage(cpu)
  const probe = process.env.REMORA_BENCH_DEBUG
    ? setInterval(() => {
        const f = driver.core.inflight
        console.error(
          `[burst] ${((performance.now() - started) / 1000).toFixed(1)} s: ${tally.completed}/${accepted} receipts, ` +
            `watermark ${f.watermark}, in flight ${f.size}, recoveries ${driver.counters.recoveries}`
        )
      }, 500)
    : undefined
  await waitFor(() => tally.completed >= accepted, 300_000, "the burst's receipts").finally(() => clearInterval(probe))
  const finished = performance.now()
  const used = process.cpuUsage(cpu)
  const usedUs = used.user + used.system
  const completed = Math.max(1, tally.completed)
  return {
    dispatchTps: completed / (usedUs / 1e6),
    wallDispatchTps: completed / ((finished - started) / 1000),
    admissionTps: txs.length / ((admitUsed.user + admitUsed.system) / 1e6),
    cpuUsPerTx: usedUs / completed,
    refused: txs.length - accepted,
    tally
  }
}

export const runExperiment = async (natsUrl: string, e: Experiment): Promise<ExperimentResult> => {
  const load = e.load
  const count = load.kind === "burst" ? load.txs : Math.ceil((load.perSecond * (load.warmupMs + load.measureMs)) / 1000)
  const txs = signedTxs(e.workload, count).slice(0, count)
  const scope = Effect.runSync(Scope.make())
  try {
    const handle = await inScope(
      scope,
      Layer.merge(kernelFor(natsUrl, e.cluster, "coordinator"), windowConsensusLayer({ windowMs: e.windowMs })),
      runCoordinator({
        id: "c",
        params: e.params,
        blockIntervalMs: e.blockIntervalMs,
        maxBlockTxs: e.maxBlockTxs,
        grpcHost: "127.0.0.1",
        grpcPort: 0,
        stallRecoveryMs: 0,
        ...e.coordinator
      })
    )
    await waitFor(() => handle.driver.workers.length >= e.workers, 20_000, `${e.workers} workers to join`)
    const stats = handle.driver.core.stats
    const base = {
      p50Ms: 0,
      p90Ms: 0,
      p99Ms: 0,
      dispatchTps: 0,
      wallDispatchTps: 0,
      admissionTps: 0,
      cpuUsPerTx: 0,
      exhausted: false
    }
    const summary = (tally: Tally) => ({
      completed: tally.completed,
      invalid: tally.invalid,
      aborted: tally.aborted,
      leaseTransfersPerTx: tally.completed === 0 ? 0 : round(tally.transfers / tally.completed, 3),
      plansAdopted: stats.plansAdopted,
      plansRecomputed: stats.plansRecomputed,
      blocks: handle.driver.counters.blocks,
      dispatched: stats.dispatched,
      ...memoryMb()
    })
    if (load.kind === "burst") {
      const b = await burst(handle, txs)
      return {
        ...base,
        ...summary(b.tally),
        refused: b.refused,
        throughput: 0,
        dispatchTps: round(b.dispatchTps, 0),
        wallDispatchTps: round(b.wallDispatchTps, 0),
        admissionTps: round(b.admissionTps, 0),
        cpuUsPerTx: round(b.cpuUsPerTx, 2)
      }
    }
    const r = load.kind === "saturate" ? await saturate(handle, txs, load) : await openLoop(handle, txs, load)
    return {
      ...base,
      ...summary(r.tally),
      throughput: round(r.throughput, 1),
      exhausted: r.exhausted,
      p50Ms: round(percentile(r.latencies, 50), 2),
      p90Ms: round(percentile(r.latencies, 90), 2),
      p99Ms: round(percentile(r.latencies, 99), 2)
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
