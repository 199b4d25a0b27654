/**
 * Membership changes decided through consensus: "Recoveries in name are treated as process joins resulting
 * from membership changes proposed and agreed upon through ckcuc". Replace, grow and shrink the group; every
 * process runs every instance with the same members, new members join by state transfer, removed ones leave.
 * 320 seeds.
 */
import { describe, expect, it } from "vitest"
import { runSuiteForN, type SeedSuite } from "./seed-suite.js"
import { SIM_SIZES } from "./sim-config.js"

const suite: SeedSuite = { scenario: "tob-membership", seedsPerN: 80 }

describe("simulated TOB, membership change", () => {
  for (const n of SIM_SIZES) {
    it(`${suite.scenario}, N = ${n}, ${suite.seedsPerN} seeds`, () => {
      expect(runSuiteForN(suite, n)).toBe("")
    })
  }
})
