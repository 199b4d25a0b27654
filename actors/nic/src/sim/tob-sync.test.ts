/**
 * Total-order broadcast on back-to-back instances, synchronous: failure-free (every instance exactly 2
 * rounds) and crash-stop with restart and rejoin. TOB safety at every step; validity and rejoin at the end.
 * 560 seeds.
 */
import { describe, expect, it } from "vitest"
import { runSuiteForN, type SeedSuite } from "./seed-suite.js"
import { SIM_SIZES } from "./sim-config.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "tob-failure-free", seedsPerN: 60 },
  { scenario: "tob-crash-restart", seedsPerN: 80 }
]

describe("simulated TOB, synchronous", () => {
  for (const suite of suites) {
    for (const n of SIM_SIZES) {
      it(`${suite.scenario}, N = ${n}, ${suite.seedsPerN} seeds`, () => {
        expect(runSuiteForN(suite, n)).toBe("")
      })
    }
  }
})
