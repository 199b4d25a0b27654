/**
 * The one percentile of Reef: nearest rank. The p-th percentile of n samples is the smallest sample such that
 * at least p% of the samples are at most it, i.e. the sample at rank ⌈p/100 · n⌉ (1-based) in ascending order.
 * It is always one of the samples (never an interpolation), so a p99 latency is a latency some request had,
 * and p100 is the maximum. An empty sample has no percentile: NaN (null in JSON), never a made-up 0.
 *
 * Pure and dependency-free (no I/O, no clock), so a protocol core may import it.
 */

/** The p-th percentile (0 ≤ p ≤ 100; p = 0 gives the minimum) of samples already in ascending order. */
export const percentileOfSorted = (sorted: ReadonlyArray<number>, p: number): number => {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile: p must be in [0, 100], got ${p}`)
  if (sorted.length === 0) return Number.NaN
  // The tolerance keeps float error from moving a whole rank up (99.9 / 100 * 1000 is 999.0000000000001).
  const rank = Math.ceil((p * sorted.length) / 100 - RANK_TOLERANCE)
  return sorted[Math.max(0, rank - 1)]!
}

const RANK_TOLERANCE = 1e-9

/** The p-th percentile (0 ≤ p ≤ 100) of samples in any order (sorts a copy; a typed array is fine). */
export const percentile = (samples: Iterable<number>, p: number): number => percentileOfSorted(ascending(samples), p)

/** A sorted copy, for reading several percentiles of one sample with `percentileOfSorted`. */
export const ascending = (samples: Iterable<number>): Array<number> => Array.from(samples).sort((a, b) => a - b)
