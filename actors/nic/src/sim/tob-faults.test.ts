/**
 * Total-order broadcast with transient omissions (excluded replicas self-crash and rejoin), and under
 * asynchrony with any number of faults (safety only). 600 seeds.
 */
import { describe, expect, it } from "vitest"
import { runSuiteForN, type SeedSuite } from "./seed-suite.js"
import { SIM_SIZES } from "./sim-config.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "tob-omission", seedsPerN: 75 },
  { scenario: "tob-async", seedsPerN: 75 }
]

describe("simulated TOB, omissions and asynchrony", () => {
  for (const suite of suites) {
    for (const n of SIM_SIZES) {
      it(`${suite.scenario}, N = ${n}, ${suite.seedsPerN} seeds`, () => {
        expect(runSuiteForN(suite, n)).toBe("")
      })
    }
  }
})
