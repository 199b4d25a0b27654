/**
 * Load against a POPUC group's KV service from this process: `concurrency` workers, each issuing one
 * request at a time for `durationMs`, in one of the three deployment modes. Records latencies (an hdr
 * histogram), errors, every completion's time (for exact stalls) and a timeline in 10 ms buckets, and this
 * process's CPU (to show the client is not the limit).
 */
import { type DeploymentMode, type KvClient, makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { type Histogram, newHistogram, recordMs, summarize } from "./harness/index.js"

export interface KvLoadResult {
  readonly ops: number
  readonly errors: number
  readonly seconds: number
  readonly throughputPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly histogram: Histogram
  /** Every successful completion, ms from the start, in order. */
  readonly completionsMs: ReadonlyArray<number>
  readonly clientCpuSeconds: number
  /** Completions per 10 ms bucket from the start. */
  readonly timeline10ms: ReadonlyArray<number>
}

export const TIMELINE_BUCKET_MS = 10

export interface KvLoadOptions {
  readonly addresses: ReadonlyArray<string>
  readonly mode: DeploymentMode
  readonly op: "set" | "get"
  readonly concurrency: number
  readonly durationMs: number
  /** Only these replicas get load (colocated), e.g. the survivors in a failover run. */
  readonly replicas?: ReadonlyArray<number>
  /** Called once, `afterMs` into the run (e.g. to kill a replica). */
  readonly during?: { readonly afterMs: number; readonly action: () => Promise<void> }
  readonly keySpace?: number
  /**
   * After a failed request a worker moves to the next replica (colocated), as a client library with several
   * endpoints does (etcd's clientv3): clients of a killed replica go on through a survivor.
   */
  readonly failover?: boolean
}

export const runKvLoad = (options: KvLoadOptions) =>
  Effect.gen(function* () {
    const targets = options.replicas ?? options.addresses.map((_, i) => i)
    const clients: Array<KvClient> = yield* Effect.forEach(options.mode === "colocated" ? targets : [0], (index) =>
      makeKvClient({ replicas: options.addresses, mode: options.mode, clientIndex: index, timeoutMs: 5_000 })
    )
    const value = Buffer.alloc(256, 1)
    const keySpace = options.keySpace ?? 10_000
    const latencies = newHistogram()
    const completions: Array<number> = []
    const timeline: Array<number> = []
    let errors = 0
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const deadline = t0 + options.durationMs
    if (options.during) {
      const { afterMs, action } = options.during
      setTimeout(() => void action(), afterMs)
    }
    yield* Effect.forEach(
      Array.from({ length: options.concurrency }, (_, w) => w),
      (w) =>
        Effect.gen(function* () {
          let mine = w % clients.length
          let i = w
          while (performance.now() < deadline) {
            const key = `bench-${(i * 7919) % keySpace}`
            i += options.concurrency
            const started = performance.now()
            const client = clients[mine]!
            const result = yield* Effect.either(options.op === "set" ? client.set(key, value) : client.get(key))
            const done = performance.now()
            if (result._tag === "Left") {
              errors++
              if (options.failover === true) mine = (mine + 1) % clients.length
              continue
            }
            recordMs(latencies, done - started)
            completions.push(done - t0)
            const bucket = Math.floor((done - t0) / TIMELINE_BUCKET_MS)
            while (timeline.length <= bucket) timeline.push(0)
            timeline[bucket]!++
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
    const seconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    const summary = summarize(latencies)
    return {
      ops: summary.count,
      errors,
      seconds,
      throughputPerSec: summary.count / seconds,
      p50Ms: summary.p50Ms,
      p99Ms: summary.p99Ms,
      histogram: latencies,
      completionsMs: completions,
      clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
      timeline10ms: timeline
    } satisfies KvLoadResult
  }).pipe(Effect.scoped)

/** Longest run of empty buckets between `fromMs` and the end, in ms (resolution one bucket). */
export const longestGapMs = (timeline: ReadonlyArray<number>, fromMs = 0, bucketMs = TIMELINE_BUCKET_MS): number => {
  let longest = 0
  let run = 0
  for (let b = Math.floor(fromMs / bucketMs); b < timeline.length; b++) {
    run = timeline[b] === 0 ? run + 1 : 0
    longest = Math.max(longest, run)
  }
  return longest * bucketMs
}

/** Completions per second within [fromMs, toMs). */
export const rateBetween = (
  timeline: ReadonlyArray<number>,
  fromMs: number,
  toMs: number,
  bucketMs = TIMELINE_BUCKET_MS
) => {
  const from = Math.floor(fromMs / bucketMs)
  const to = Math.min(timeline.length, Math.floor(toMs / bucketMs))
  let sum = 0
  for (let b = from; b < to; b++) sum += timeline[b]!
  return to > from ? sum / (((to - from) * bucketMs) / 1000) : 0
}

/**
 * The longest interval between successive completions among those ending after `fromMs` (the interval a kill
 * at `fromMs` falls in counts whole; the run's end counts as a completion), and the longest before it: the
 * same definition etcdload's -gap-from uses, so both sides of a failover are measured alike.
 */
export const gapsAround = (completionsMs: ReadonlyArray<number>, fromMs: number, endMs: number) => {
  let previous = 0
  let after = 0
  let before = 0
  for (const at of [...completionsMs, endMs]) {
    if (at > fromMs) after = Math.max(after, at - previous)
    else if (previous > 0) before = Math.max(before, at - previous)
    previous = at
  }
  return { afterMs: after, beforeMs: before }
}
