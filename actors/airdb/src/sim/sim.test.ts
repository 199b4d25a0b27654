/**
 * The shell's simulator in CI (real clients over simulated segment storage, with merges and blocks; the core's
 * simulator, core-sim.test.ts, runs the many seeds): a few seeds per scenario must pass every check, and every
 * deliberately broken client must be caught. `pnpm sim airdb --seeds N` runs more; a failure prints the command that replays it.
 */
import { describe, expect, it } from "vitest"
import { MUTANTS, replayCommand, runScenario, SCENARIOS } from "./scenarios.js"

const SEEDS_PER_SCENARIO = 1
/**
 * Contention and the broken variants the core simulator also catches (no conflict check, the timely bound
 * ignored) run there, over many seeds; here, only what needs real clients: merges (skipped-merge) and the shell.
 */
const CORE_COVERED = new Set(["contention", "no-conflict-check", "ignore-timely-bound"])
/** A scenario's seeds are CPU-bound simulated runs: on a loaded 2-core machine they take minutes, not seconds. */
const SCENARIO_TIMEOUT_MS = 300_000

describe("the AirDB simulator", () => {
  for (const scenario of [...SCENARIOS.keys()].filter((s) => !CORE_COVERED.has(s))) {
    it(
      `finds no violation in scenario ${scenario} (${SEEDS_PER_SCENARIO} seeds)`,
      () => {
        const failures = []
        let crashes = 0
        for (let seed = 1; seed <= SEEDS_PER_SCENARIO; seed++) {
          const r = runScenario(scenario, seed)
          crashes += r.stats.crashes
          expect(r.stats.committed).toBeGreaterThan(0)
          if (r.violation !== undefined)
            failures.push(`${r.violation.property}: ${r.violation.detail}\n  ${replayCommand(r)}`)
        }
        expect(failures).toEqual([])
        const faults = SCENARIOS.get(scenario)!.faults
        if (faults.crashInAppend + faults.crashAfterStateRecord + faults.crashInSnapshot > 0) {
          expect(crashes).toBeGreaterThan(0)
        }
      },
      SCENARIO_TIMEOUT_MS
    )
  }

  const expected: Record<string, RegExp> = {
    "no-conflict-check": /^history: (G-single|G2|G1c|incompatible-order)/,
    "skipped-merge": /^(state = replay|history: )/,
    "ignore-timely-bound": /^timely-snapshot/
  }
  for (const [mutant, { scenario }] of [...MUTANTS].filter(([m]) => !CORE_COVERED.has(m))) {
    it(
      `catches the broken client ${mutant}`,
      () => {
        let caught: string | undefined
        for (let seed = 1; seed <= 8 && caught === undefined; seed++)
          caught = runScenario(scenario, seed, mutant).violation?.property
        expect(caught).toMatch(expected[mutant]!)
      },
      SCENARIO_TIMEOUT_MS
    )
  }
})
