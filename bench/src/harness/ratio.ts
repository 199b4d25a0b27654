/**
 * A ratio is declared as a numerator and a denominator measured under the same conditions (same client,
 * concurrency, payload, durability, warm-up, duration: `conditions` says which), and is reported as the
 * median and min–max of its value in each interleaved round, never a best-of. A headline taken from a curve
 * states its operating point. Simulated ratios (virtual time, modelled costs) are their own kind, named with
 * `Sim`, and live in their own section of a result.
 */
import type { Round } from "./interleave.js"
import type { MachineInterval } from "./machine.js"
import { type Spread, sig, spreadOf } from "./stats.js"

export type Conditions = Readonly<Record<string, string | number | boolean>>

export interface RatioSpec {
  /** What the numerator is, with its unit: "Reef ask, 64 in flight (/s)". */
  readonly numerator: string
  readonly denominator: string
  /** What both sides share. */
  readonly conditions: Conditions
  /** Where on a curve the ratio is taken, when it is: "32 clients in flight on both sides". */
  readonly operatingPoint?: string
  readonly note?: string
}

export interface Ratio extends RatioSpec, Spread {
  readonly kind: "measured" | "simulated"
  /** The ratio in each round (measured) or seed (simulated). */
  readonly values: ReadonlyArray<number>
  readonly numeratorValues: ReadonlyArray<number>
  readonly denominatorValues: ReadonlyArray<number>
  readonly repeats: number
  /** Measured: rounds run again because the machine was busy, and rounds still busy after that. */
  readonly reruns?: number
  readonly busyRounds?: number
  /** Measured: the machine during each kept round. */
  readonly machine?: ReadonlyArray<MachineInterval>
  /** Simulated: the seeds. */
  readonly seeds?: ReadonlyArray<number>
}

const rounded = (xs: ReadonlyArray<number>) => xs.map((x) => sig(x, 4))

/** A measured ratio from interleaved rounds: `numerator(round) / denominator(round)` in each. */
export const ratioOf = <V extends Record<string, unknown>>(
  spec: RatioSpec,
  rounds: ReadonlyArray<Round<V>>,
  numerator: (values: V) => number,
  denominator: (values: V) => number
): Ratio => {
  const nums = rounds.map((r) => numerator(r.values))
  const dens = rounds.map((r) => denominator(r.values))
  const values = nums.map((n, i) => n / dens[i]!)
  const spread = spreadOf(values)
  return {
    ...spec,
    kind: "measured",
    median: sig(spread.median),
    min: sig(spread.min),
    max: sig(spread.max),
    values: rounded(values),
    numeratorValues: rounded(nums),
    denominatorValues: rounded(dens),
    repeats: rounds.length,
    reruns: rounds.reduce((s, r) => s + r.reruns, 0),
    busyRounds: rounds.filter((r) => r.busy).length,
    machine: rounds.map((r) => r.machine)
  }
}

/** A simulated ratio over seeds: one (numerator, denominator) per seed. */
export const simRatioOf = (
  spec: RatioSpec,
  samples: ReadonlyArray<{ readonly seed: number; readonly numerator: number; readonly denominator: number }>
): Ratio => {
  const values = samples.map((s) => s.numerator / s.denominator)
  const spread = spreadOf(values)
  return {
    ...spec,
    kind: "simulated",
    median: sig(spread.median),
    min: sig(spread.min),
    max: sig(spread.max),
    values: rounded(values),
    numeratorValues: rounded(samples.map((s) => s.numerator)),
    denominatorValues: rounded(samples.map((s) => s.denominator)),
    repeats: samples.length,
    seeds: samples.map((s) => s.seed)
  }
}

/** A measured figure repeated over rounds (a rate, a latency), reported the same way as a ratio's sides. */
export const figureOf = <V extends Record<string, unknown>>(
  rounds: ReadonlyArray<Round<V>>,
  value: (values: V) => number
): Spread & { readonly values: ReadonlyArray<number> } => {
  const values = rounds.map((r) => value(r.values))
  const s = spreadOf(values)
  return { median: sig(s.median), min: sig(s.min), max: sig(s.max), values: rounded(values) }
}
