/**
 * Shared simulator settings: the round timer every simulated replica runs, and the clocks. Simulated time is
 * an integer number of microseconds; the cores speak milliseconds.
 */
import { makeRoundTimerConfig, type RoundTimerConfig, roundPeriodMs } from "../core/round-timer.js"
import type { TimingKind, TimingModel } from "./network.js"
import { Prng } from "./prng.js"

/** ΔI = 1 ms, ΔW = 2ΔI, ΔD = 0.1 ms: a 3.1 ms round. */
export const SIM_ROUND_TIMER: RoundTimerConfig = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1 })

export const msToUs = (ms: number): number => Math.round(ms * 1000)

export const SIM_PERIOD_US = msToUs(roundPeriodMs(SIM_ROUND_TIMER))

/** The N values the simulator draws from when none is given. */
export const SIM_SIZES: ReadonlyArray<number> = [3, 5, 7, 9]

export const timingModel = (kind: TimingKind, overrides: Partial<TimingModel> = {}): TimingModel => ({
  kind,
  interactionUs: msToUs(SIM_ROUND_TIMER.interactionMs),
  minDelayUs: 20,
  periodUs: SIM_PERIOD_US,
  dropP: 0.05,
  duplicateP: 0.02,
  slowP: 0.2,
  maxSlowUs: 4 * SIM_PERIOD_US,
  ...overrides
})

/**
 * A clock's rate: how many real microseconds one local microsecond lasts. In a synchronous run two clocks
 * drift apart by at most ΔD per round period (rates within 1 ± ΔD / 2P); in an asynchronous run by up to
 * `asyncDrift` (30% by default).
 */
export const clockRate = (rng: Prng, kind: TimingKind, asyncDrift = 0.3): number => {
  const rho = kind === "sync" ? SIM_ROUND_TIMER.driftMs / (2 * roundPeriodMs(SIM_ROUND_TIMER)) : asyncDrift
  return rng.between(1 - rho, 1 + rho)
}

/** Start skew: within ΔW in a synchronous run, up to two rounds in an asynchronous one. */
export const startSkewUs = (rng: Prng, kind: TimingKind): number =>
  rng.int(0, kind === "sync" ? msToUs(SIM_ROUND_TIMER.windowMs) : 2 * SIM_PERIOD_US)

/**
 * A run's generator and group: N is always drawn from the seed, so replaying with --n equal to the drawn N
 * replays the exact same run.
 */
export const drawGroup = (
  seed: number,
  n: number | undefined
): { readonly rng: Prng; readonly n: number; readonly members: ReadonlyArray<string> } => {
  const rng = new Prng(seed)
  const drawn = rng.pick(SIM_SIZES)
  const size = n ?? drawn
  return { rng, n: size, members: [...Array(size).keys()].map((i) => `p${i}`) }
}
