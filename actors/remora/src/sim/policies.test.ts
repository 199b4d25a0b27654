import { describe, expect, it } from "vitest"
import { POLICIES } from "../core/placement.js"
import { SCENARIOS } from "./scenarios.js"
import { describeSeedChunks } from "./seed-chunks.js"
import { CI_SEEDS_PER_SCENARIO } from "./seed-suite.js"

describe("simulator, scenario policies: the sweep", () => {
  it("its CI seeds draw every placement policy (locality-only included) many times", () => {
    const draws = new Map<string, number>()
    const scenario = SCENARIOS.get("policies")!
    for (let seed = 1; seed <= CI_SEEDS_PER_SCENARIO; seed++) {
      const policy = scenario(seed).coordinator.policy
      draws.set(policy, (draws.get(policy) ?? 0) + 1)
    }
    expect([...draws.keys()].sort()).toEqual([...POLICIES].sort())
    for (const policy of POLICIES) expect(draws.get(policy)).toBeGreaterThanOrEqual(30)
  })
})

describeSeedChunks("policies", "Theorem 1, Lemma 8, Lemma 4 and Theorem 3 hold")
