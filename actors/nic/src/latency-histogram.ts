/**
 * A fixed-size log-scale histogram of latencies in milliseconds (1 µs .. ~30 s, 8 buckets per doubling):
 * constant memory under any load, percentiles within ~9%. Used for the interaction-latency distribution
 * (the paper's Fig. 1) and round times.
 */
const BUCKETS_PER_DOUBLING = 8
const MIN_MS = 0.001
const BUCKETS = BUCKETS_PER_DOUBLING * 25

export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS + 1)
  private total = 0
  private maxMs = 0

  record(ms: number): void {
    const bucket = ms <= MIN_MS ? 0 : Math.min(BUCKETS, Math.ceil(Math.log2(ms / MIN_MS) * BUCKETS_PER_DOUBLING))
    this.counts[bucket]!++
    this.total++
    if (ms > this.maxMs) this.maxMs = ms
  }

  /** Upper bound of the bucket holding the p-th percentile (0 < p <= 100). */
  percentileMs(p: number): number {
    if (this.total === 0) return 0
    const rank = Math.ceil((p / 100) * this.total)
    let seen = 0
    for (let b = 0; b <= BUCKETS; b++) {
      seen += this.counts[b]!
      if (seen >= rank) return Math.min(this.maxMs, MIN_MS * 2 ** (b / BUCKETS_PER_DOUBLING))
    }
    return this.maxMs
  }

  summary() {
    return {
      count: this.total,
      p50: this.percentileMs(50),
      p99: this.percentileMs(99),
      p999: this.percentileMs(99.9),
      max: this.maxMs
    }
  }

  /** Non-empty buckets as [upper bound ms, count], for plotting the distribution. */
  buckets(): ReadonlyArray<readonly [number, number]> {
    const out: Array<readonly [number, number]> = []
    for (let b = 0; b <= BUCKETS; b++) {
      if (this.counts[b]! > 0) out.push([MIN_MS * 2 ** (b / BUCKETS_PER_DOUBLING), this.counts[b]!])
    }
    return out
  }
}
