/**
 * The client core's simulator in CI: a few hundred seeds over every scenario must pass every check, a seed must
 * replay exactly, and every deliberately broken core must be caught. `pnpm sim airdb-core --seeds N` runs more;
 * a failure prints the command that replays it.
 */
import { describe, expect, it } from "vitest"
import { CORE_MUTANTS, CORE_SCENARIOS, coreReplayCommand, runCoreScenario } from "./core-scenarios.js"

const SEEDS_PER_SCENARIO = 40
/** Seeds a mutant may need before a check catches it (each is caught by the first few). */
const MUTANT_SEEDS = 10

describe("the AirDB client core's simulator", () => {
  for (const scenario of CORE_SCENARIOS.keys()) {
    it(`finds no violation in scenario ${scenario} (${SEEDS_PER_SCENARIO} seeds)`, () => {
      const failures: Array<string> = []
      const sum = { committed: 0, crashes: 0, adoptions: 0, ambiguous: 0 }
      for (let seed = 1; seed <= SEEDS_PER_SCENARIO; seed++) {
        const r = runCoreScenario(scenario, seed)
        sum.committed += r.stats.committed
        sum.crashes += r.stats.crashes
        sum.adoptions += r.stats.adoptions
        sum.ambiguous += r.stats.ambiguousCalls
        if (r.violation !== undefined) {
          failures.push(`${r.violation.property}: ${r.violation.detail}\n  ${coreReplayCommand(r)}`)
        }
      }
      expect(failures).toEqual([])
      // The faults were there: commits, adoptions (reads racing rebased tails) and, where planned, crashes.
      expect(sum.committed).toBeGreaterThan(SEEDS_PER_SCENARIO * 10)
      expect(sum.adoptions).toBeGreaterThan(0)
      const options = CORE_SCENARIOS.get(scenario)!
      if (options.crashes !== undefined) expect(sum.crashes).toBeGreaterThan(0)
      if (options.ambiguous > 0) expect(sum.ambiguous).toBeGreaterThan(0)
    })
  }

  it("replays a seed exactly", () => {
    const a = runCoreScenario("pauses", 7)
    const b = runCoreScenario("pauses", 7)
    expect(b).toEqual(a)
    const m1 = runCoreScenario("faults", 1, "ack-before-durable")
    expect(m1.violation).toBeDefined()
    expect(runCoreScenario("faults", 1, "ack-before-durable")).toEqual(m1)
  })

  for (const [mutant, { scenario, caughtBy }] of CORE_MUTANTS) {
    it(`catches the broken core ${mutant}`, () => {
      let caught: string | undefined
      for (let seed = 1; seed <= MUTANT_SEEDS && caught === undefined; seed++) {
        caught = runCoreScenario(scenario, seed, mutant).violation?.property
      }
      expect(caught).toMatch(caughtBy)
    })
  }
})
