/**
 * Load against a POPUC group's KV service from this process: `concurrency` workers, each issuing one
 * request at a time for `durationMs`, in one of the three deployment modes. Records latencies, errors, a
 * completion timeline in 10 ms buckets (for stalls) and this process's CPU (to show the client is not the
 * limit).
 */
import { type DeploymentMode, type KvClient, makeKvClient } from "@reef/replica"
import { percentile } from "@reef/stats"
import * as Effect from "effect/Effect"

export interface KvLoadResult {
  readonly ops: number
  readonly errors: number
  readonly seconds: number
  readonly throughputPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
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
}

export const runKvLoad = (options: KvLoadOptions) =>
  Effect.gen(function* () {
    const targets = options.replicas ?? options.addresses.map((_, i) => i)
    const clients: Array<KvClient> = yield* Effect.forEach(options.mode === "colocated" ? targets : [0], (index) =>
      makeKvClient({ replicas: options.addresses, mode: options.mode, clientIndex: index, timeoutMs: 5_000 })
    )
    const value = Buffer.alloc(256, 1)
    const keySpace = options.keySpace ?? 10_000
    const latencies: Array<number> = []
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
          const client = clients[w % clients.length]!
          let i = w
          while (performance.now() < deadline) {
            const key = `bench-${(i * 7919) % keySpace}`
            i += options.concurrency
            const started = performance.now()
            const result = yield* Effect.either(options.op === "set" ? client.set(key, value) : client.get(key))
            const done = performance.now()
            if (result._tag === "Left") {
              errors++
              continue
            }
            latencies.push(done - started)
            const bucket = Math.floor((done - t0) / TIMELINE_BUCKET_MS)
            while (timeline.length <= bucket) timeline.push(0)
            timeline[bucket]!++
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
    const seconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    return {
      ops: latencies.length,
      errors,
      seconds,
      throughputPerSec: latencies.length / seconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
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
