/**
 * Fig. 9 of the Remora paper on real processes: a load that rises by half and falls back, against a coordinator
 * that scales its worker pool (`reef run coordinator --autoscale 2..3`: two workers active, one pre-launched spare)
 * and, as the same-run baseline, against the same three workers as a fixed pool (no `--autoscale`).
 *
 * The workers run the stateful part of each transaction on virtual cores for a synthetic cost (`--cores`,
 * `statefulCostUs`), so each worker process has a capacity of its own however small the machine: the spike
 * exceeds what two workers execute and fits in three (the paper's 40k -> 60k -> 40k TPS, scaled down). What
 * the run records:
 *
 * - every receipt (completion time, latency from the first submission, the worker that ran it);
 * - the pool as the coordinator reports it (`GetExecutionState.pool`: active / retiring / spare, load P) twice a
 *   second, and the coordinator's `autoscaler:` log lines (decisions and retirement phases, timed on arrival);
 * - the retired worker's exit (code and time);
 * - whether the executed state equals the sequential reference execution of the receipts' order.
 *
 * The metrics (pure functions below, unit-tested):
 * - `scaleOutSeconds`: from the spike's start to the first receipt the activated spare gave;
 * - `p90 inflation during scaling`: p90 latency of the completions inside the transitions (spike start to 3 s
 *   after the new worker served; the retirement decision to 3 s after the worker was retired) over the p90 of the
 *   steady stretch before the spike; the fixed pool's p90 inside the same windows is the baseline;
 * - `longest gap`: the longest stretch without any completion while load is offered; the elastic run's stall is
 *   what it has beyond the fixed pool's of the same round.
 */
import type { ChildProcess } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type RemoraClient, receiptOrder, referenceHash } from "@reef/coordinator"
import type { ExecutionState, Receipt, Transaction } from "@reef/proto"
import { bodySource, ed25519Signer, Prng, signingKeyFromSeed, transactionStream } from "@reef/remora"
import { percentile } from "@reef/stats"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { timelineOf } from "./fig8.js"
import { runLoad, startProcessCluster } from "./process-cluster.js"

/** Throughput buckets (ms); latency percentiles over time use LATENCY_BUCKET_MS (a 250 ms bucket has ~20 samples). */
export const BUCKET_MS = 250
export const LATENCY_BUCKET_MS = 1_000
/** A transition lasts until this long after its last event (the new worker served; the worker retired). */
export const SETTLE_S = 3

/** The offered load: `baseTps` for `beforeS`, `spikeTps` for `spikeS`, `baseTps` again for `afterS`. */
export interface Fig9Profile {
  readonly baseTps: number
  readonly spikeTps: number
  readonly beforeS: number
  /** The first seconds of `beforeS` are warm-up: the steady stretch is [warmupS, beforeS). */
  readonly warmupS: number
  readonly spikeS: number
  readonly afterS: number
}

/** The synthetic work and virtual machine size that give each worker its capacity (tx/s = cores / cost). */
export interface Fig9Work {
  readonly cores: number
  readonly statefulCostUs: number
  readonly keys: number
  readonly objectsPerTx: number
}

/** `reef run coordinator --autoscale MIN..MAX` and its tuning (calibrated for Fig9Work on this machine). */
export interface Fig9Autoscale {
  readonly min: number
  readonly max: number
  readonly highUs: number
  readonly lowUs: number
  readonly sustain: number
  readonly coolDownMs: number
  readonly everyMs: number
}

export type Fig9Mode = "elastic" | "fixed"

export interface Fig9Options {
  readonly mode: Fig9Mode
  readonly seed: number
  readonly profile: Fig9Profile
  readonly work: Fig9Work
  readonly autoscale: Fig9Autoscale
  /** Worker processes (the elastic pool's MAX, the fixed pool's size). */
  readonly workers: number
  readonly windowMs: number
  readonly epochMs: number
}

export const profileSeconds = (p: Fig9Profile): number => p.beforeS + p.spikeS + p.afterS

export const spikeStartS = (p: Fig9Profile): number => p.beforeS
export const spikeEndS = (p: Fig9Profile): number => p.beforeS + p.spikeS

/** Offered rate (tx/s) at `tS` seconds since the load began; 0 once the profile is over. */
export const rateAt = (p: Fig9Profile, tS: number): number =>
  tS < 0 || tS >= profileSeconds(p) ? 0 : tS >= spikeStartS(p) && tS < spikeEndS(p) ? p.spikeTps : p.baseTps

/** Transactions due by `tMs` since the load began: the integral of the rate (whole transactions). */
export const dueBy = (p: Fig9Profile, tMs: number): number => {
  const t = Math.min(Math.max(0, tMs / 1000), profileSeconds(p))
  const spike = Math.max(0, Math.min(t, spikeEndS(p)) - spikeStartS(p))
  return Math.floor(t * p.baseTps + spike * (p.spikeTps - p.baseTps) + 1e-9)
}

export interface Completion {
  /** ms since the load began. */
  readonly at: number
  readonly latencyMs: number
  readonly worker: string
}

/** Seconds since the load began of what the autoscaler did (undefined: it did not happen). */
export interface ScalingEvents {
  /** Active workers when the load began, and the spare (elastic only). */
  readonly initialActive: ReadonlyArray<string>
  readonly spare: string | undefined
  readonly scaleOutDecisionS: number | undefined
  /** The first receipt the spare gave. */
  readonly newWorkerServingS: number | undefined
  readonly retireDecisionS: number | undefined
  readonly retiredWorker: string | undefined
  /** The coordinator's log: the worker retired (Alg. 5 done). */
  readonly retiredS: number | undefined
  readonly retiredExitS: number | undefined
  readonly retiredExitCode: number | null | undefined
}

export interface PoolSample {
  readonly t: number
  readonly active: number
  readonly retiring: number
  readonly spare: number
  /** Mean load P over the active workers (µs of synthetic work outstanding). */
  readonly meanLoadUs: number
}

export interface Fig9Run {
  readonly mode: Fig9Mode
  readonly profile: Fig9Profile
  /** Every receipt (kept in memory for the metrics; the result stores the timeline). */
  readonly completions: ReadonlyArray<Completion>
  readonly timeline: ReturnType<typeof timelineOf>
  readonly latencyTimeline: ReturnType<typeof timelineOf>
  readonly pool: ReadonlyArray<PoolSample>
  readonly events: ScalingEvents
  readonly scaleOuts: number
  readonly scaleIns: number
  /** Decisions the coordinator logged (`autoscaler: scale-out`, `autoscaler: retire`). */
  readonly decisions: ReadonlyArray<{ readonly atS: number; readonly line: string }>
  /** Recoveries the coordinator logged (none is expected: nothing fails). */
  readonly recoveries: number
  readonly submitted: number
  readonly answered: number
  /** Receipts per worker. */
  readonly byWorker: Readonly<Record<string, number>>
  /**
   * The executed state (GetExecutionState, once complete) equals the sequential reference execution of the
   * receipts' order; undefined when the state did not become complete within 30 s.
   */
  readonly stateMatchesReference: boolean | undefined
}

// ---- pure metrics ------------------------------------------------------------------------------------------

/**
 * The longest stretch (s) in [fromS, toS) with no completion, and where it began: the gaps between consecutive
 * completions, and from `fromS` to the first and from the last to `toS`.
 */
export const longestGap = (
  completions: ReadonlyArray<{ readonly at: number }>,
  fromS: number,
  toS: number
): { readonly seconds: number; readonly atS: number } => {
  const times = completions
    .map((c) => c.at / 1000)
    .filter((t) => t >= fromS && t < toS)
    .sort((a, b) => a - b)
  let best = { seconds: 0, atS: fromS }
  let previous = fromS
  for (const t of [...times, toS]) {
    if (t - previous > best.seconds) best = { seconds: t - previous, atS: previous }
    previous = t
  }
  return best
}

/** The transitions' windows [from, to) in seconds since the load began: scale-out, then scale-in (when they happened). */
export const transitionWindows = (
  p: Fig9Profile,
  e: ScalingEvents,
  settleS = SETTLE_S
): ReadonlyArray<{ readonly name: "scale-out" | "scale-in"; readonly fromS: number; readonly toS: number }> => {
  const out: Array<{ name: "scale-out" | "scale-in"; fromS: number; toS: number }> = []
  if (e.newWorkerServingS !== undefined && e.newWorkerServingS >= spikeStartS(p)) {
    out.push({ name: "scale-out", fromS: spikeStartS(p), toS: e.newWorkerServingS + settleS })
  }
  const retired = e.retiredS ?? e.retiredExitS
  if (e.retireDecisionS !== undefined && retired !== undefined) {
    out.push({ name: "scale-in", fromS: e.retireDecisionS, toS: retired + settleS })
  }
  return out
}

const latenciesIn = (
  completions: ReadonlyArray<Completion>,
  windows: ReadonlyArray<{ readonly fromS: number; readonly toS: number }>
) =>
  completions.filter((c) => windows.some((w) => c.at >= w.fromS * 1000 && c.at < w.toS * 1000)).map((c) => c.latencyMs)

/** p-th percentile latency (ms) of the completions inside the windows; NaN if none. */
export const percentileIn = (
  completions: ReadonlyArray<Completion>,
  windows: ReadonlyArray<{ readonly fromS: number; readonly toS: number }>,
  p: number
): number => {
  const xs = latenciesIn(completions, windows)
  return xs.length === 0 ? Number.NaN : percentile(xs, p)
}

/** The steady stretch before the spike (after the warm-up). */
export const steadyWindow = (p: Fig9Profile) => [{ fromS: p.warmupS, toS: spikeStartS(p) }]

/** Spike start to the spare's first receipt (s); NaN when it never served or served before the spike. */
export const scaleOutSeconds = (p: Fig9Profile, e: ScalingEvents): number =>
  e.newWorkerServingS === undefined || e.newWorkerServingS < spikeStartS(p)
    ? Number.NaN
    : e.newWorkerServingS - spikeStartS(p)

/** Completions per second in [fromS, toS). */
export const throughputIn = (completions: ReadonlyArray<Completion>, fromS: number, toS: number): number =>
  toS <= fromS
    ? Number.NaN
    : completions.filter((c) => c.at >= fromS * 1000 && c.at < toS * 1000).length / (toS - fromS)

/** One round's Fig. 9 numbers: the elastic run against the fixed pool under the same profile. */
export interface Fig9RoundMetrics {
  readonly scaleOutSeconds: number
  readonly steadyP90Ms: number
  readonly transitionP90Ms: number
  /** transitionP90Ms / steadyP90Ms of the elastic run. */
  readonly p90Inflation: number
  /** The fixed pool inside the elastic run's transition windows, over its own steady p90. */
  readonly fixedSteadyP90Ms: number
  readonly fixedTransitionP90Ms: number
  readonly fixedP90Inflation: number
  /** p90 over the whole spike and 3 s after it (what a longer transition would show), elastic and fixed. */
  readonly spikeP90Ms: number
  readonly fixedSpikeP90Ms: number
  readonly longestGapSeconds: number
  readonly longestGapAtS: number
  readonly fixedLongestGapSeconds: number
  /** The elastic run's longest gap beyond the fixed pool's (0 when not longer). */
  readonly stallSeconds: number
  /** Completions per second in each phase (after each transition settled), elastic and fixed. */
  readonly throughput: Readonly<
    Record<"before" | "spike" | "after", { elastic: number; fixed: number; offered: number }>
  >
  /** Each transition's window, with the elastic run's p90 inside it over the steady p90. */
  readonly transitions: ReadonlyArray<{
    readonly name: "scale-out" | "scale-in"
    readonly fromS: number
    readonly toS: number
    readonly p90Inflation: number
  }>
  /** From the end of the spike to the worker retired (the coordinator's log), s; NaN if none was. */
  readonly scaleInSeconds: number
}

export const roundMetrics = (elastic: Fig9Run, fixed: Fig9Run): Fig9RoundMetrics => {
  const p = elastic.profile
  const windows = transitionWindows(p, elastic.events)
  const steady = steadyWindow(p)
  const steadyP90Ms = percentileIn(elastic.completions, steady, 90)
  const transitionP90Ms = percentileIn(elastic.completions, windows, 90)
  const fixedSteadyP90Ms = percentileIn(fixed.completions, steady, 90)
  const fixedTransitionP90Ms = percentileIn(fixed.completions, windows, 90)
  const end = profileSeconds(p)
  const spikeWindow = [{ fromS: spikeStartS(p), toS: spikeEndS(p) + SETTLE_S }]
  // Load is offered from 0 to the end of the profile; the first completions need a block or two: from the
  // warm-up on.
  const gap = longestGap(elastic.completions, p.warmupS, end)
  const fixedGap = longestGap(fixed.completions, p.warmupS, end)
  const servedS = elastic.events.newWorkerServingS
  const spikeFrom = servedS !== undefined && servedS < spikeEndS(p) ? servedS + SETTLE_S : spikeStartS(p) + SETTLE_S
  const afterFrom = (elastic.events.retiredS ?? spikeEndS(p)) + SETTLE_S
  const phase = (fromS: number, toS: number, offered: number) => ({
    elastic: throughputIn(elastic.completions, fromS, toS),
    fixed: throughputIn(fixed.completions, fromS, toS),
    offered
  })
  return {
    scaleOutSeconds: scaleOutSeconds(p, elastic.events),
    steadyP90Ms,
    transitionP90Ms,
    p90Inflation: transitionP90Ms / steadyP90Ms,
    fixedSteadyP90Ms,
    fixedTransitionP90Ms,
    fixedP90Inflation: fixedTransitionP90Ms / fixedSteadyP90Ms,
    spikeP90Ms: percentileIn(elastic.completions, spikeWindow, 90),
    fixedSpikeP90Ms: percentileIn(fixed.completions, spikeWindow, 90),
    longestGapSeconds: gap.seconds,
    longestGapAtS: gap.atS,
    fixedLongestGapSeconds: fixedGap.seconds,
    stallSeconds: Math.max(0, gap.seconds - fixedGap.seconds),
    throughput: {
      before: phase(p.warmupS, spikeStartS(p), p.baseTps),
      spike: phase(Math.min(spikeFrom, spikeEndS(p)), spikeEndS(p), p.spikeTps),
      after: phase(Math.min(afterFrom, end), end, p.baseTps)
    },
    transitions: windows.map((w) => ({ ...w, p90Inflation: percentileIn(elastic.completions, [w], 90) / steadyP90Ms })),
    scaleInSeconds:
      elastic.events.retiredS === undefined || elastic.events.retiredS < spikeEndS(p)
        ? Number.NaN
        : elastic.events.retiredS - spikeEndS(p)
  }
}

/** Events from the coordinator's `autoscaler:` lines (times in s since the load began). */
export const eventsFromLog = (
  log: ReadonlyArray<{ readonly atS: number; readonly line: string }>
): Pick<ScalingEvents, "scaleOutDecisionS" | "retireDecisionS" | "retiredWorker" | "retiredS"> => {
  const scaleOut = log.find((l) => /autoscaler: scale-out .*joins the pool/.test(l.line))
  const retire = log.map((l) => ({ l, m: /autoscaler: retire (\S+)/.exec(l.line) })).find((x) => x.m !== null)
  const worker = retire?.m?.[1]
  const retired =
    worker === undefined
      ? undefined
      : log.find(
          (l) => l.atS >= retire!.l.atS && l.line.includes(`autoscaler: ${worker} (`) && /\) retired \(/.test(l.line)
        )
  return {
    scaleOutDecisionS: scaleOut?.atS,
    retireDecisionS: retire?.l.atS,
    retiredWorker: worker,
    retiredS: retired?.atS
  }
}

// ---- the run -----------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const trace = (line: string) => {
  if (process.env.REMORA_BENCH_DEBUG) console.error(`[fig9] ${line}`)
}

/** The state once `ok` holds of it, or undefined after `seconds`. */
const stateWhen = async (client: RemoraClient, ok: (s: ExecutionState) => boolean, seconds: number) => {
  const deadline = performance.now() + seconds * 1000
  while (performance.now() < deadline) {
    const s = await Effect.runPromise(Effect.either(client.state))
    if (s._tag === "Right" && ok(s.right)) return s.right
    await sleep(200)
  }
  return undefined
}

export const runFig9 = async (options: Fig9Options): Promise<Fig9Run> => {
  const { profile, work, autoscale } = options
  const scope = Effect.runSync(Scope.make())
  const dataDir = await mkdtemp(join(tmpdir(), "reef-bench-fig9-"))
  try {
    const log: Array<{ at: number; line: string }> = []
    const workerIds = Array.from({ length: options.workers }, (_, i) => `w${i + 1}`)
    const cluster = await startProcessCluster(
      {
        cluster: `fig9-${options.mode}-${options.seed}`,
        workerIds,
        coordinatorArgs: [
          "--data-dir",
          dataDir,
          "--window-ms",
          String(options.windowMs),
          "--epoch-ms",
          String(options.epochMs),
          ...(options.mode === "elastic"
            ? [
                "--autoscale",
                `${autoscale.min}..${autoscale.max}`,
                "--autoscale-high",
                String(autoscale.highUs),
                "--autoscale-low",
                String(autoscale.lowUs),
                "--autoscale-sustain",
                String(autoscale.sustain),
                "--autoscale-cooldown-ms",
                String(autoscale.coolDownMs),
                "--autoscale-every-ms",
                String(autoscale.everyMs)
              ]
            : [])
        ],
        workerArgs: ["--cores", String(work.cores)],
        onCoordinatorLine: (_atMs, line) => {
          log.push({ at: performance.now(), line })
          if (/autoscaler:|recovery after/.test(line)) trace(line)
        }
      },
      scope
    )
    const client = cluster.client
    const exits = new Map<string, { at: number; code: number | null }>()
    for (const [id, child] of cluster.workers as ReadonlyMap<string, ChildProcess>) {
      child.once("exit", (code) => exits.set(id, { at: performance.now(), code }))
    }
    // Every worker joined, and (elastic) MIN of them active, the rest spares.
    const expectActive = options.mode === "elastic" ? autoscale.min : options.workers
    const ready = await stateWhen(
      client,
      (s) => s.pool.length === options.workers && s.pool.filter((m) => m.state === "active").length === expectActive,
      60
    )
    if (ready === undefined) throw new Error(`fig9 ${options.mode}: the pool did not form within 60 s`)
    const initialActive = ready.pool.filter((m) => m.state === "active").map((m) => m.worker)
    const spare = ready.pool.find((m) => m.state === "spare")?.worker
    trace(`${options.mode}: active ${initialActive.join(",")}, spare ${spare ?? "none"}`)

    const random = new Prng(options.seed)
    const key = signingKeyFromSeed(new Uint8Array(32).fill(9))
    const next = transactionStream(
      bodySource(
        {
          kind: "ycsb",
          keys: work.keys,
          objectsPerTx: work.objectsPerTx,
          zipf: 0,
          statelessCostUs: 0,
          statefulCostUs: work.statefulCostUs
        },
        random.fork()
      ),
      ed25519Signer(key),
      random.fork(),
      0,
      `f9-${options.mode}-${options.seed}-`
    )
    const completions: Array<Completion> = []
    const byWorker: Record<string, number> = {}
    const sent: Array<Transaction> = []
    const receipts: Array<Receipt> = []
    const byId = new Map<string, Transaction>()
    const total = dueBy(profile, profileSeconds(profile) * 1000)
    const load = runLoad({
      client,
      pace: { dueBy: (ms) => dueBy(profile, ms) },
      total,
      next: (n) => {
        sent[n] = next().tx
        return sent[n]!
      },
      onReceipt: (n, atMs, latencyMs, receipt) => {
        receipts.push(receipt)
        byId.set(receipt.txId, sent[n]!)
        completions.push({ at: atMs, latencyMs, worker: receipt.worker })
        byWorker[receipt.worker] = (byWorker[receipt.worker] ?? 0) + 1
      }
    })
    const sinceS = (at: number) => (at - load.startedAt) / 1000
    // The pool twice a second (what an operator sees), until the load is over.
    const pool: Array<PoolSample> = []
    let polling = true
    const poller = (async () => {
      while (polling) {
        const s = await Effect.runPromise(Effect.either(client.state))
        if (s._tag === "Right") {
          const active = s.right.pool.filter((m) => m.state === "active")
          pool.push({
            t: Math.round(sinceS(performance.now()) * 100) / 100,
            active: active.length,
            retiring: s.right.pool.filter((m) => m.state === "retiring").length,
            spare: s.right.pool.filter((m) => m.state === "spare").length,
            meanLoadUs:
              active.length === 0 ? 0 : Math.round(active.reduce((n, m) => n + Number(m.loadUs), 0) / active.length)
          })
        }
        await sleep(500)
      }
    })()
    const answered = await load.done(60_000)
    // A retirement decided near the end of the load gets time to finish (its worker exits).
    if (options.mode === "elastic") {
      await stateWhen(client, (s) => s.pool.every((m) => m.state !== "retiring"), 20)
    }
    polling = false
    await poller
    load.stop()
    // Nothing runs any more: the state settles complete (every worker answered at the current generation).
    const final = await stateWhen(client, (s) => s.complete, 30)
    const stateMatchesReference =
      final === undefined ? undefined : final.stateHash === referenceHash(receiptOrder(receipts), byId)
    if (stateMatchesReference === false) trace(`${options.mode}: the state differs from the reference execution`)
    const last = final ?? (await stateWhen(client, () => true, 5))

    const timedLog = log.map((l) => ({ atS: sinceS(l.at), line: l.line }))
    const fromLog = eventsFromLog(timedLog)
    const servedBySpare = spare === undefined ? undefined : completions.find((c) => c.worker === spare)
    const exit = fromLog.retiredWorker === undefined ? undefined : exits.get(fromLog.retiredWorker)
    const endMs = Math.max(profileSeconds(profile) * 1000, ...completions.map((c) => c.at + 1))
    return {
      mode: options.mode,
      profile,
      completions,
      timeline: timelineOf(completions, endMs, BUCKET_MS),
      latencyTimeline: timelineOf(completions, endMs, LATENCY_BUCKET_MS),
      pool,
      events: {
        initialActive,
        spare,
        ...fromLog,
        newWorkerServingS: servedBySpare === undefined ? undefined : servedBySpare.at / 1000,
        retiredExitS: exit === undefined ? undefined : sinceS(exit.at),
        retiredExitCode: exit?.code
      },
      scaleOuts: last === undefined ? Number.NaN : Number(last.scaleOuts),
      scaleIns: last === undefined ? Number.NaN : Number(last.scaleIns),
      decisions: timedLog
        .filter((l) => /autoscaler: (scale-out|retire )/.test(l.line))
        .map((l) => ({ atS: Math.round(l.atS * 100) / 100, line: l.line })),
      recoveries: log.filter((l) => /recovery after/.test(l.line)).length,
      submitted: answered.submitted,
      answered: answered.answered,
      byWorker,
      stateMatchesReference
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await rm(dataDir, { recursive: true, force: true })
  }
}
