/**
 * Latencies go into hdr-histogram-js histograms (µs, 3 significant digits) so that percentiles over several
 * processes come from one merged histogram, never from a max or a mean of per-process percentiles. A child
 * process sends its histogram as hdr's compressed base64 (`encodeHistogram`); the parent merges them.
 */
import * as hdr from "hdr-histogram-js"

export type Histogram = hdr.Histogram

export const newHistogram = (): Histogram =>
  hdr.build({ bitBucketSize: 64, autoResize: true, lowestDiscernibleValue: 1, numberOfSignificantValueDigits: 3 })

/** Records one latency in ms (kept in µs; below 1 µs counts as 1 µs). */
export const recordMs = (h: Histogram, ms: number): void => {
  h.recordValue(Math.max(1, Math.round(ms * 1000)))
}

export const histogramOfMs = (samples: Iterable<number>): Histogram => {
  const h = newHistogram()
  for (const ms of samples) recordMs(h, ms)
  return h
}

export const encodeHistogram = (h: Histogram): string => hdr.encodeIntoCompressedBase64(h)

export const decodeHistogram = (encoded: string): Histogram => hdr.decodeFromCompressedBase64(encoded, 64, false)

/** One histogram holding every sample of `parts` (histograms or their encodings). */
export const mergeHistograms = (parts: ReadonlyArray<Histogram | string>): Histogram => {
  const merged = newHistogram()
  for (const part of parts) merged.add(typeof part === "string" ? decodeHistogram(part) : part)
  return merged
}

export interface LatencySummary {
  readonly count: number
  readonly p50Ms: number
  readonly p90Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

const ms = (us: number) => Math.round(us) / 1000

export const summarize = (h: Histogram): LatencySummary => ({
  count: h.totalCount,
  p50Ms: h.totalCount === 0 ? Number.NaN : ms(h.getValueAtPercentile(50)),
  p90Ms: h.totalCount === 0 ? Number.NaN : ms(h.getValueAtPercentile(90)),
  p99Ms: h.totalCount === 0 ? Number.NaN : ms(h.getValueAtPercentile(99)),
  maxMs: h.totalCount === 0 ? Number.NaN : ms(h.maxValue)
})
