/** The spread of a set of repeated values: median (the mean of the middle two for an even count), min, max. */
export interface Spread {
  readonly median: number
  readonly min: number
  readonly max: number
}

export const spreadOf = (values: ReadonlyArray<number>): Spread => {
  const xs = values.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
  if (xs.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN }
  const mid = xs.length >> 1
  const median = xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2
  return { median, min: xs[0]!, max: xs[xs.length - 1]! }
}

/** Rounds to `digits` significant digits (ratios and rates alike read well that way). */
export const sig = (x: number, digits = 3): number =>
  Number.isFinite(x) && x !== 0 ? Number(x.toPrecision(digits)) : x
