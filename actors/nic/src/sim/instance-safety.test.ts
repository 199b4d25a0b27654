/**
 * One POPUC instance under arbitrary delays, drops and duplicates, with f <= t and with f > t: "Safety
 * (validity, uniform agreement) holds for any number of failures and any message delays"; processes may
 * self-crash but never disagree. 1,400 seeds.
 */
import { describe, expect, it } from "vitest"
import { runSuiteForN, type SeedSuite } from "./seed-suite.js"
import { SIM_SIZES } from "./sim-config.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "async", seedsPerN: 175 },
  { scenario: "overload", seedsPerN: 175 }
]

describe("simulated POPUC instance, safety only", () => {
  for (const suite of suites) {
    for (const n of SIM_SIZES) {
      it(`${suite.scenario}, N = ${n}, ${suite.seedsPerN} seeds`, () => {
        expect(runSuiteForN(suite, n)).toBe("")
      })
    }
  }
})
