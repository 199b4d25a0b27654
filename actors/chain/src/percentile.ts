/**
 * The p-th percentile of an ascending array (0 when empty), the same rank rule as the CLI's; to be replaced
 * by the shared one when the platform library lands.
 */
export const percentileOfSorted = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
