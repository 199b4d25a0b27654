/**
 * One POPUC instance in synchronous runs with f <= t: safety at every step, and termination within
 * min(f+2, t+1) rounds ("exactly 2" without failures) for every correct process. 2,400 seeds.
 */
import { describe, expect, it } from "vitest"
import { runSuiteForN, type SeedSuite } from "./seed-suite.js"
import { SIM_SIZES } from "./sim-config.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "failure-free", seedsPerN: 150 },
  { scenario: "crash", seedsPerN: 225 },
  { scenario: "omission", seedsPerN: 225 }
]

describe("simulated POPUC instance, synchronous, f <= t", () => {
  for (const suite of suites) {
    for (const n of SIM_SIZES) {
      it(`${suite.scenario}, N = ${n}, ${suite.seedsPerN} seeds`, () => {
        expect(runSuiteForN(suite, n)).toBe("")
      })
    }
  }
})
