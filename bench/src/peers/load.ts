/**
 * The result shape every peer load run (etcd via the Go `etcdload` tool, Redis via
 * `redis-benchmark`) is reduced to, so the POPUC bench can print peers side by side, plus pure
 * helpers over it. No I/O here, so it is unit-testable on its own.
 */

export interface LoadResult {
  /** Successful requests. */
  readonly ops: number
  /** Wall time of the timed phase. */
  readonly seconds: number
  /** Successful requests per second over `seconds`. */
  readonly throughputPerSec: number
  /** Latency percentiles of successful requests (NaN if the tool did not report them). */
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** Failed requests (timeouts, "no leader", connection refused, ...). */
  readonly errors: number
  /** CPU seconds (user+sys) the load generator itself spent during the run. */
  readonly clientCpuSeconds: number
  /** CPU seconds the servers (all members) spent during the run, when known. */
  readonly serverCpuSeconds?: number
  /** Busy CPU seconds of the whole machine during the run (client + servers + anything else). */
  readonly machineCpuSeconds?: number
  /** Successful completions per 100 ms bucket from the start of the timed phase ([] if unknown). */
  readonly timeline100ms: ReadonlyArray<number>
  /** Exact longest interval (ms) without a successful completion, when the tool measures it. */
  readonly maxGapMs?: number
  /** With a gap offset (a kill's): the longest gap between completions ending after it, and before it. */
  readonly maxGapFromMs?: number
  readonly maxGapBeforeMs?: number
  /** A few distinct error messages, when there were errors. */
  readonly errorSamples?: ReadonlyArray<string>
}

/**
 * Longest run of consecutive empty buckets in a per-`bucketMs` completion timeline, in ms: the
 * write stall seen by clients, e.g. while a killed leader is replaced. Resolution is one bucket:
 * a real gap of g ms shows as between g - 2·bucketMs and g, since the buckets at either edge of
 * the gap hold completions. Empty buckets at the start or end count too (a stall may run to the
 * end of the load).
 */
export const longestStallMs = (timeline: ReadonlyArray<number>, bucketMs = 100): number => {
  let longest = 0
  let run = 0
  for (const count of timeline) {
    run = count === 0 ? run + 1 : 0
    if (run > longest) longest = run
  }
  return longest * bucketMs
}

/** How many of the machine's cores a CPU-seconds figure kept busy over `seconds` of wall time. */
export const coresBusy = (cpuSeconds: number, seconds: number): number => (seconds > 0 ? cpuSeconds / seconds : 0)
