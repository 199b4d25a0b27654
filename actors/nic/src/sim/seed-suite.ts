/**
 * How CI runs the simulator: a fixed range of seeds per scenario and per N, failing with every violation's
 * description and replay command. Shared by the *.test.ts suites, which vitest runs in parallel.
 */
import { describe, expect, it } from "vitest"
import { describeFailure } from "./report.js"
import { runSeeds } from "./scenarios.js"
import { SIM_SIZES } from "./sim-config.js"

export interface SeedSuite {
  readonly scenario: string
  /** Seeds per N; each N in {3, 5, 7, 9} gets its own range. */
  readonly seedsPerN: number
}

/** Runs one N's share of a suite and returns the failure report (empty when clean). */
export const runSuiteForN = (suite: SeedSuite, n: number): string => {
  const firstSeed = 1 + SIM_SIZES.indexOf(n) * 100_000
  const summary = runSeeds(suite.scenario, firstSeed, suite.seedsPerN, { n })
  return summary.failures.map(describeFailure).join("\n\n")
}

/** One test per suite and N, each failing with every violation of its seed range. */
export const describeSeedSuites = (title: string, suites: ReadonlyArray<SeedSuite>): void => {
  describe(title, () => {
    for (const suite of suites) {
      for (const n of SIM_SIZES) {
        // CPU-bound simulated runs: on a loaded machine one N's seeds can take minutes (a liveness bound only).
        it(`${suite.scenario}, N = ${n}, ${suite.seedsPerN} seeds`, () => {
          expect(runSuiteForN(suite, n)).toBe("")
        }, 240_000)
      }
    }
  })
}
