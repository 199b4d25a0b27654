import { describe, expect, it } from "vitest"
import {
  calibrateRoundTimer,
  closesOnAllHeard,
  makeRoundTimerConfig,
  nextRoundDurationMs,
  percentile,
  roundPeriodMs
} from "./round-timer.js"

describe("round timer (§6.2, App. A)", () => {
  const config = makeRoundTimerConfig({ interactionMs: 2, driftMs: 0.5 })

  it("The timer calls timeout every time interval of duration ΔI + ΔW + ΔD", () => {
    // "The maximum synchronization time window ΔW is equal to twice the upper-bounded interaction latency ΔI"
    expect(config.windowMs).toBe(4)
    expect(roundPeriodMs(config)).toBe(6.5)
    expect(nextRoundDurationMs(config, "timeout")).toBe(6.5)
  })

  it("the consensus engine adjusts the round timer by not only anticipating the next round but also slightly reducing the round duration", () => {
    expect(nextRoundDurationMs(config, "catchUp")).toBe(6)
    expect(
      nextRoundDurationMs(makeRoundTimerConfig({ interactionMs: 2, driftMs: 0.5, catchUpShortenMs: 1 }), "catchUp")
    ).toBe(5.5)
  })

  it("refuses a shortening that would close a caught-up round before a timely message can arrive", () => {
    expect(() => makeRoundTimerConfig({ interactionMs: 2, windowMs: 2, driftMs: 0.5, catchUpShortenMs: 1 })).toThrow(
      /2 × interactionMs/
    )
    expect(() => makeRoundTimerConfig({ interactionMs: 0, driftMs: 0 })).toThrow()
    expect(() => makeRoundTimerConfig({ interactionMs: 1, driftMs: -1 })).toThrow()
  })

  it("percentile is nearest-rank", () => {
    const samples = [...Array(1000).keys()].map((i) => i + 1)
    expect(percentile(samples, 0.999)).toBe(999)
    expect(percentile(samples, 1)).toBe(1000)
    expect(percentile([5], 0.5)).toBe(5)
    expect(() => percentile([], 0.5)).toThrow()
  })

  it("calibration: upper time bounds can be confidently established with margins over measured latencies", () => {
    // 999 samples at 2 µs and one outlier: the 99.9th percentile ignores the outlier, the margin covers jitter.
    const samples = [...Array(999).fill(0.002), 0.05]
    const c = calibrateRoundTimer(samples, { percentile: 0.999, safetyFactor: 1.5, clockDriftPpm: 100 })
    expect(c.interactionMs).toBeCloseTo(0.003)
    expect(c.windowMs).toBeCloseTo(0.006)
    expect(c.driftMs).toBeGreaterThanOrEqual(0.001)
    expect(roundPeriodMs(c)).toBeGreaterThan(3 * c.interactionMs)
    const strict = calibrateRoundTimer(samples, { percentile: 1 })
    expect(strict.interactionMs).toBeCloseTo(0.0625)
    expect(() => calibrateRoundTimer([1, Number.NaN])).toThrow()
    expect(() => calibrateRoundTimer([1], { safetyFactor: 0.5 })).toThrow()
  })

  it("a round closed on all heard lasts a full period from the previous deadline; the flag survives validation", () => {
    const c = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1, closeOnAllHeard: true })
    expect(closesOnAllHeard(c)).toBe(true)
    expect(nextRoundDurationMs(c, "allHeard")).toBe(roundPeriodMs(c))
    expect(closesOnAllHeard(makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1 }))).toBe(false)
  })
})
