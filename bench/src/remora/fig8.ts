/**
 * Fig. 8 of the Remora paper on real processes: a coordinator (`reef run coordinator --data-dir --epoch-ms E`)
 * and three workers over a spawned nats-server, a constant YCSB load from one gRPC client, and crashes:
 *
 * 1. `workerKills` times, at a random moment after a steady stretch: a random worker killed with SIGKILL and
 *    restarted with the same id at once (a supervisor's restart; the paper spawns a replacement). The
 *    coordinator sees the new incarnation, fences, rolls back to the persisted epoch and replays.
 * 2. `coordinatorKills` times: the coordinator killed with SIGKILL and restarted on its data directory.
 *
 * Throughput and p90 latency (first submission to receipt, retries included) are recorded per 250 ms of
 * completion time over the whole run, with every kill marked.
 *
 * - `dipSeconds` of a worker kill: the time, in the window after it, with throughput (a 1.25 s centred moving mean
 *   of the 250 ms buckets) below half the median of the 5 s before it (the paper sees about 2 s), and the same read
 *   over the 5 s before it as the noise floor;
 * - `restartToServingMs` of a coordinator kill: from spawning the new process to the first receipt of a new
 *   transaction a fresh client submits to it (each probe is a new client, so no gRPC reconnect back-off is
 *   counted); `killToReceiptMs`: from the kill to the load client's next receipt; `replayMs`: what the
 *   coordinator itself logs as its restore ("serving again N ms after start").
 */

import type { ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ExecutionCallError, makeExecutionClient, type RemoraClient, type Submitted } from "@reef/coordinator"
import { startReefChild } from "@reef/devkit"
import { freePort, startNatsServer } from "@reef/kernel"
import { RejectReason, type Transaction } from "@reef/proto"
import { bodySource, ed25519Signer, Prng, signingKeyFromSeed, transactionStream } from "@reef/remora"
import { percentile } from "@reef/stats"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

export const BUCKET_MS = 250
/** The stretch before a kill whose median throughput is the "pre-failure" level. */
const PRE_FAILURE_S = 5

export interface Fig8Options {
  readonly quick: boolean
  readonly seed: number
  /** The coordinator's `--epoch-ms`: how often a snapshot epoch ends. */
  readonly epochMs: number
  readonly workerKills: number
  readonly coordinatorKills: number
  /** Offered load (tx/s). */
  readonly rateTps?: number
  /** More `reef run coordinator` options (e.g. `--stall-recovery-ms 0`); none in the bench's figure. */
  readonly coordinatorOptions?: ReadonlyArray<string>
}

export interface WorkerKill {
  readonly worker: string
  /** Seconds since the load began. */
  readonly atS: number
  readonly preFailureTps: number
  readonly dipSeconds: number
  /** The noise floor: seconds below half the pre-failure level in the stretch before the kill, read the same way. */
  readonly preFailureBelowHalfSeconds: number
  /** Back above half the pre-failure level by the end of the window after the kill (else the dip is censored). */
  readonly recovered: boolean
  /**
   * The pre-failure level was within half and 1.5 times the offered rate; when not (still down from an earlier
   * fault, or catching up on its backlog), the kill has no steady level to fall from and its `dipSeconds` is NaN.
   */
  readonly steadyBefore: boolean
  /** From the kill to the coordinator's log of the recovery it started (the restart seen), ms. */
  readonly killToRecoveryMs: number
  /** Transactions the recovery dispatched again (its replay set, from the coordinator's log). */
  readonly replayed: number
}

export interface CoordinatorKill {
  readonly atS: number
  readonly restartToServingMs: number
  readonly killToReceiptMs: number
  /** The new coordinator's own account: from its start to serving again (its replay of the log done). */
  readonly replayMs: number
  /** Blocks its restore replayed (from its log). */
  readonly replayedBlocks: number
}

export interface Fig8Run {
  readonly epochMs: number
  readonly rateTps: number
  /** Per bucket: its start (s since the load began), completions per second, p50 and p90 latency (ms). */
  readonly timeline: ReadonlyArray<{
    readonly t: number
    readonly tps: number
    readonly p50Ms: number
    readonly p90Ms: number
  }>
  readonly workerKills: ReadonlyArray<WorkerKill>
  readonly coordinatorKills: ReadonlyArray<CoordinatorKill>
  /**
   * Recoveries the coordinators logged over the run, and those no kill explains: a live worker taken for gone
   * ("wN left" of a worker not killed) or the stall backstop ("no completion for ...").
   */
  readonly recoveries: number
  readonly unprovokedRecoveries: number
  /** Coordinator CPU per completed transaction over the steady stretch before the first kill (µs). */
  readonly coordinatorCpuUsPerTx: number
  readonly transactions: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const trace = (line: string) => {
  if (process.env.REMORA_BENCH_DEBUG) console.error(`[fig8] ${line}`)
}

/** CPU seconds (user + system) of a process so far; 0 once it is gone. */
const cpuSeconds = (pid: number | undefined): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** Per-bucket throughput, p50 and p90 of `completions` up to `endMs` (also Fig. 9's, at its own bucket size). */
export const timelineOf = (
  completions: ReadonlyArray<{ readonly at: number; readonly latencyMs: number }>,
  endMs: number,
  bucketMs = BUCKET_MS
): Fig8Run["timeline"] => {
  const buckets = new Map<number, Array<number>>()
  for (const c of completions) {
    if (c.at >= endMs) continue
    const b = Math.floor(c.at / bucketMs)
    let list = buckets.get(b)
    if (list === undefined) {
      list = []
      buckets.set(b, list)
    }
    list.push(c.latencyMs)
  }
  return Array.from({ length: Math.floor(endMs / bucketMs) }, (_, b) => {
    const list = buckets.get(b) ?? []
    return {
      t: (b * bucketMs) / 1000,
      tps: (list.length * 1000) / bucketMs,
      p50Ms: list.length === 0 ? 0 : percentile(list, 50),
      p90Ms: list.length === 0 ? 0 : percentile(list, 90)
    }
  })
}

/** Buckets on each side of a bucket in its moving mean: 5 buckets, 1.25 s (250 ms buckets alone are noisy). */
const SMOOTH_SIDE = 2

/**
 * Throughput of each bucket as the mean of the 5 buckets centred on it: a gap of n >= 3 empty buckets stays
 * below half the level for exactly n buckets; a shorter one is no dip.
 */
export const smoothed = (
  timeline: ReadonlyArray<{ readonly t: number; readonly tps: number }>
): Array<{ readonly t: number; readonly tps: number }> =>
  timeline.map((p, i) => {
    const window = timeline.slice(Math.max(0, i - SMOOTH_SIDE), i + SMOOTH_SIDE + 1)
    return { t: p.t, tps: window.reduce((sum, q) => sum + q.tps, 0) / window.length }
  })

/**
 * The dip after a kill at `atS`, on the moving mean: the median throughput of the PRE_FAILURE_S before it,
 * the seconds in [atS, untilS) below half of it, and (the noise floor, measured the same way) the seconds below
 * half in the PRE_FAILURE_S before it.
 */
export const dipAfter = (
  timeline: Fig8Run["timeline"],
  atS: number,
  untilS: number
): {
  readonly preFailureTps: number
  readonly dipSeconds: number
  readonly preFailureBelowHalfSeconds: number
  readonly recovered: boolean
} => {
  const smooth = smoothed(timeline)
  const bucketS = BUCKET_MS / 1000
  // Buckets whose moving mean reaches past the kill are neither before nor after it.
  const before = smooth.filter((p) => p.t >= atS - PRE_FAILURE_S && p.t + bucketS * (SMOOTH_SIDE + 1) <= atS)
  const preFailureTps =
    before.length === 0
      ? 0
      : percentile(
          before.map((p) => p.tps),
          50
        )
  const seconds = (points: ReadonlyArray<{ readonly tps: number }>) =>
    (points.filter((p) => p.tps < preFailureTps / 2).length * BUCKET_MS) / 1000
  const after = smooth.filter((p) => p.t + bucketS > atS && p.t < untilS)
  const last = after.filter((p) => p.t >= untilS - 2)
  return {
    preFailureTps,
    dipSeconds: seconds(after),
    preFailureBelowHalfSeconds: seconds(before),
    recovered: last.some((p) => p.tps >= preFailureTps / 2)
  }
}

export const runFig8 = async (options: Fig8Options): Promise<Fig8Run> => {
  const scope = Effect.runSync(Scope.make())
  const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>, into: Scope.Scope = scope) =>
    Effect.runPromise(Scope.extend(effect, into))
  const dataDir = await mkdtemp(join(tmpdir(), "reef-bench-fig8-"))
  let clientScope = Effect.runSync(Scope.make())
  try {
    const random = new Prng(options.seed)
    const nats = await run(startNatsServer({ jetstream: false }))
    const port = await Effect.runPromise(freePort)
    const address = `127.0.0.1:${port}`
    const cluster = `fig8-${options.seed}-${options.epochMs}`
    const began = performance.now()
    const sinceMs = () => performance.now() - began
    const log: Array<{ at: number; line: string }> = []
    const child = (role: string, id: string, extra: ReadonlyArray<string>) =>
      run(
        startReefChild({
          name: `${role}/${id}`,
          args: ["run", role, "--id", id, "--nats", nats.url, "--cluster", cluster, ...extra],
          env: { OTEL_SDK_DISABLED: "true" },
          onLine: (line) => {
            if (role === "coordinator") log.push({ at: sinceMs(), line })
            if (process.env.REMORA_BENCH_DEBUG && /WARN|ERROR/.test(line)) console.error(`[${role}/${id}] ${line}`)
          }
        })
      )
    const coordinatorArgs = [
      "--execution-port",
      String(port),
      "--data-dir",
      dataDir,
      "--window-ms",
      "100",
      "--epoch-ms",
      String(options.epochMs),
      ...(options.coordinatorOptions ?? [])
    ]
    let coordinator = await child("coordinator", "x1", coordinatorArgs)
    const workerIds = ["w1", "w2", "w3"]
    const workers = new Map<string, ChildProcess>()
    for (const id of workerIds) workers.set(id, await child("worker", id, ["--coordinator", "x1"]))
    trace(`epoch ${options.epochMs} ms: processes up`)
    // The load's client; replaced by a fresh one after a coordinator restart (its channel would back off).
    let client: RemoraClient = await run(makeExecutionClient({ address, timeoutMs: 60_000 }), clientScope)

    // ---- constant load ----
    // Well below what the cluster executes even on a loaded 2-core machine: a steady level to fall from.
    const rateTps = options.rateTps ?? (options.quick ? 120 : 300)
    const key = signingKeyFromSeed(new Uint8Array(32).fill(8))
    const next = transactionStream(
      bodySource(
        { kind: "ycsb", keys: 10_000, objectsPerTx: 2, zipf: 0.6, statelessCostUs: 0, statefulCostUs: 0 },
        random.fork()
      ),
      ed25519Signer(key),
      random.fork(),
      0,
      `f8-${options.seed}-${options.epochMs}-`
    )
    const loadStart = performance.now()
    const completions: Array<{ at: number; latencyMs: number }> = []
    let lastReceiptAt = 0
    let loading = true
    let closing = false
    const submit = (tx: Transaction, firstAt: number): void => {
      if (closing) return
      const on = client
      const retryLater = () => {
        if (!closing) setTimeout(() => submit(tx, firstAt), 100)
      }
      try {
        on.submitCallback(tx, outcome)
      } catch {
        // A client whose channel was shut down (the one replaced after a coordinator restart): again on the current.
        retryLater()
      }
      function outcome(o: Submitted | ExecutionCallError): void {
        const retry =
          o instanceof ExecutionCallError ||
          (o._tag === "Rejected" &&
            (o.rejection.reason === RejectReason.REJECT_REASON_UNAVAILABLE ||
              o.rejection.reason === RejectReason.REJECT_REASON_OVERLOADED))
        if (retry) {
          retryLater()
          return
        }
        const now = performance.now()
        lastReceiptAt = now
        completions.push({ at: now - loadStart, latencyMs: now - firstAt })
      }
    }
    const pacer = (async () => {
      let sent = 0
      while (loading) {
        const due = Math.floor(((performance.now() - loadStart) / 1000) * rateTps)
        for (; sent < due; sent++) submit(next().tx, performance.now())
        await sleep(10)
      }
    })()
    const loadS = () => (performance.now() - loadStart) / 1000
    const logSince = (atMs: number) => log.filter((l) => l.at >= atMs)

    // ---- worker kills ----
    const warmupS = options.quick ? 8 : 12
    const observeS = options.quick ? 8 : 12
    await sleep(warmupS * 1000 * 0.4)
    const steady = { cpu: cpuSeconds(coordinator.pid), done: completions.length }
    const kills: Array<{ worker: string; atS: number; atMs: number; untilS: number }> = []
    let cpuAtFirstKill = { cpu: 0, done: 0 }
    for (let k = 0; k < options.workerKills; k++) {
      // A steady stretch (the pre-failure window and more), then a random moment.
      const waitS = k === 0 ? warmupS * 0.6 + random.float() * 3 : PRE_FAILURE_S + random.float() * 2
      await sleep(waitS * 1000)
      if (k === 0) cpuAtFirstKill = { cpu: cpuSeconds(coordinator.pid), done: completions.length }
      const worker = workerIds[random.below(workerIds.length)]!
      const victim = workers.get(worker)!
      const atMs = sinceMs()
      const atS = loadS()
      trace(`kill ${worker} at ${atS.toFixed(1)} s; ${completions.length} completions so far`)
      victim.kill("SIGKILL")
      await exited(victim)
      workers.set(worker, await child("worker", worker, ["--coordinator", "x1"]))
      await sleep(Math.max(0, observeS * 1000 - (sinceMs() - atMs)))
      kills.push({ worker, atS, atMs, untilS: loadS() })
    }

    // ---- coordinator kills ----
    const coordinatorKills: Array<CoordinatorKill> = []
    for (let k = 0; k < options.coordinatorKills; k++) {
      await sleep((PRE_FAILURE_S - 2 + random.float() * 2) * 1000)
      const atS = loadS()
      const killedAt = performance.now()
      const killedAtMs = sinceMs()
      trace(`kill the coordinator at ${atS.toFixed(1)} s; ${completions.length} completions so far`)
      coordinator.kill("SIGKILL")
      await exited(coordinator)
      const spawnedAt = performance.now()
      coordinator = await child("coordinator", "x1", coordinatorArgs)
      // A fresh client per probe: the first new transaction the new process executes.
      let servedAt: number | undefined
      const deadline = performance.now() + (options.quick ? 60_000 : 120_000)
      while (servedAt === undefined && performance.now() < deadline) {
        const probeScope = Effect.runSync(Scope.make())
        try {
          const probe = await run(makeExecutionClient({ address, timeoutMs: 2_000 }), probeScope)
          const outcome = await Effect.runPromise(Effect.either(probe.submitTransaction(next().tx, true)))
          if (outcome._tag === "Right" && outcome.right.outcome?.$case === "receipt") servedAt = performance.now()
        } finally {
          await Effect.runPromise(Scope.close(probeScope, Exit.void))
        }
        if (servedAt === undefined) await sleep(20)
      }
      // The load's client again on a fresh channel; what it has in flight is retried on the new one.
      const oldScope = clientScope
      clientScope = Effect.runSync(Scope.make())
      client = await run(makeExecutionClient({ address, timeoutMs: 60_000 }), clientScope)
      void Effect.runPromise(Scope.close(oldScope, Exit.void))
      while (lastReceiptAt < spawnedAt && performance.now() < deadline) await sleep(20)
      const served = logSince(killedAtMs).find((l) => /serving again/.test(l.line))
      const restored = logSince(killedAtMs).find((l) => /coordinator restarted/.test(l.line))
      coordinatorKills.push({
        atS,
        restartToServingMs: servedAt === undefined ? Number.NaN : Math.round(servedAt - spawnedAt),
        killToReceiptMs: Math.round(lastReceiptAt - killedAt),
        replayMs: Number(/serving again (\d+) ms/.exec(served?.line ?? "")?.[1] ?? Number.NaN),
        replayedBlocks: Number(/(\d+) blocks to replay/.exec(restored?.line ?? "")?.[1] ?? Number.NaN)
      })
      trace(`coordinator back: ${JSON.stringify(coordinatorKills.at(-1))}`)
    }
    await sleep(3_000)
    const endMs = performance.now() - loadStart
    loading = false
    await pacer
    closing = true

    // ---- the figure ----
    const timeline = timelineOf(completions, endMs)
    const workerKills = kills.map((k) => {
      const recovery = logSince(k.atMs).find((l) => /recovery after/.test(l.line))
      const seqs = /replay set seqs (\d+)\.\.(\d+)/.exec(recovery?.line ?? "")
      const dip = dipAfter(timeline, k.atS, k.untilS)
      // Not steady before the kill (still down from an earlier fault, or catching up on its backlog): no level to
      // fall from, no dip to read.
      const steadyBefore = dip.preFailureTps >= rateTps / 2 && dip.preFailureTps <= rateTps * 1.5
      return {
        worker: k.worker,
        atS: k.atS,
        ...dip,
        steadyBefore,
        dipSeconds: steadyBefore ? dip.dipSeconds : Number.NaN,
        killToRecoveryMs: recovery === undefined ? Number.NaN : Math.round(recovery.at - k.atMs),
        replayed: seqs === null ? Number.NaN : Number(seqs[2]) - Number(seqs[1]) + 1
      }
    })
    const steadyTxs = cpuAtFirstKill.done - steady.done
    const killed = new Set(kills.map((k) => k.worker))
    const recoveryLines = log.filter((l) => /recovery after/.test(l.line)).map((l) => l.line)
    const unprovoked = recoveryLines.filter((line) => {
      const left = /recovery after (\S+) left/.exec(line)
      return /recovery after no completion/.test(line) || (left !== null && !killed.has(left[1]!))
    })
    return {
      epochMs: options.epochMs,
      rateTps,
      timeline,
      workerKills,
      coordinatorKills,
      recoveries: recoveryLines.length,
      unprovokedRecoveries: unprovoked.length,
      coordinatorCpuUsPerTx: steadyTxs <= 0 ? Number.NaN : ((cpuAtFirstKill.cpu - steady.cpu) * 1e6) / steadyTxs,
      transactions: completions.length
    }
  } finally {
    await Effect.runPromise(Scope.close(clientScope, Exit.void))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await rm(dataDir, { recursive: true, force: true })
  }
}
