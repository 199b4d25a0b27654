import { describe, expect, it } from "vitest"
import { MUTANTS } from "./mutants.js"
import { describeFailure, runSeeds, SCENARIOS } from "./scenarios.js"
import { runSim } from "./world.js"

/** Seeds per scenario in CI: a few hundred runs in all, in seconds. */
const SEEDS = 50

describe("the backup follower's simulator", () => {
  for (const name of SCENARIOS.keys()) {
    it(`${name}: the backup's state is the primary's after every persisted block, no block skipped or applied twice`, () => {
      const summary = runSeeds(name, 1, SEEDS)
      expect(summary.failures.map((f) => describeFailure(f))).toEqual([])
      expect(summary.blocks).toBeGreaterThan(SEEDS * 5)
    })
  }

  it("exercises what it claims: rejected hints, refetches, duplicates, crashes", () => {
    const chaos = runSeeds("chaos", 1, SEEDS)
    expect(chaos.hintsRejected).toBeGreaterThan(0)
    expect(chaos.hintFailures).toBeGreaterThan(0)
    expect(chaos.refetches).toBeGreaterThan(0)
    expect(chaos.duplicates).toBeGreaterThan(0)
    expect(chaos.crashes).toBeGreaterThan(0)
  })

  it("replays a seed exactly", () => {
    const scenario = SCENARIOS.get("chaos")!
    const a = runSim(17, scenario)
    const b = runSim(17, scenario)
    expect(b.trace).toEqual(a.trace)
    expect(b.stats).toEqual(a.stats)
  })

  /** Where each mutant shows: the scenario whose faults it mishandles. */
  const HUNTS: Readonly<Record<string, string>> = {
    "trust-hint": "bad-hints",
    "skip-verify": "forged",
    "no-fallback": "bad-hints",
    "resume-ahead": "crashes",
    "resume-behind": "crashes",
    "no-dedup": "stream",
    "skip-gap": "stream"
  }
  for (const mutant of MUTANTS.keys()) {
    it(`catches the ${mutant} mutant`, () => {
      const summary = runSeeds(HUNTS[mutant]!, 1, SEEDS, { mutant, stopAtFirstFailure: true })
      expect(summary.failures.length, `${mutant} survived ${SEEDS} seeds of ${HUNTS[mutant]}`).toBe(1)
    })
  }
})
