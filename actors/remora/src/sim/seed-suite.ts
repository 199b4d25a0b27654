/**
 * How CI runs the simulator: a fixed range of seeds per scenario, failing with every violation's description
 * and replay command. One test file per scenario, so vitest spreads them over the cores.
 */
import { describeFailure, runSeeds } from "./scenarios.js"

/** Seeds per scenario in CI: five scenarios, 2,000 runs in all. */
export const CI_SEEDS_PER_SCENARIO = 400

/** Runs a scenario's CI seeds in chunks (one test each, so a slow chunk shows) and returns the failure report. */
export const runSuiteChunk = (scenario: string, chunk: number, chunks: number): string => {
  const size = Math.ceil(CI_SEEDS_PER_SCENARIO / chunks)
  const first = 1 + chunk * size
  const count = Math.min(size, CI_SEEDS_PER_SCENARIO - chunk * size)
  const summary = runSeeds(scenario, first, count)
  return summary.failures.map(describeFailure).join("\n\n")
}
