/**
 * How CI runs the simulator: a fixed range of seeds per scenario, failing with every violation's description
 * and replay command. One test file per scenario, so vitest spreads them over the cores.
 */
import { describeFailure, runSeeds } from "./scenarios.js"

/** Seeds per scenario in CI: five fault-free-process scenarios, 2,000 runs in all. */
export const CI_SEEDS_PER_SCENARIO = 400
/**
 * Seeds per crash scenario in CI (a run with kills, restarts and replays costs several times one without);
 * `pnpm sim remora --seeds 5000 --scenario worker-crash,coordinator-crash,crash-chaos` runs thousands.
 */
export const CI_CRASH_SEEDS_PER_SCENARIO = 200

/** Runs a scenario's CI seeds in chunks (one test each, so a slow chunk shows) and returns the failure report. */
export const runSuiteChunk = (
  scenario: string,
  chunk: number,
  chunks: number,
  seeds = CI_SEEDS_PER_SCENARIO
): string => {
  const size = Math.ceil(seeds / chunks)
  const first = 1 + chunk * size
  const count = Math.min(size, seeds - chunk * size)
  const summary = runSeeds(scenario, first, count)
  return summary.failures.map(describeFailure).join("\n\n")
}
