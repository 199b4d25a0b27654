/**
 * The paper's timed rounds (`--round-close timer`): every round lasts its full timer instead of closing once
 * all peers are heard from (the default). The same guarantees must hold end to end: a linearizable history
 * and identical replicas.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { check, runWorkload, useGroup } from "./popuc-harness.js"

const fixture = useGroup({ n: 3, cluster: "timed", extraArgs: ["--round-close", "timer"] })

describe("POPUC with the paper's timed rounds", () => {
  it("concurrent clients produce a linearizable history and identical replicas", async () => {
    const { entries, states } = await Effect.runPromise(
      runWorkload(fixture.group, 6, "colocated", { opsPerClient: 12, keys: 4, seed: 7, prefix: "timed-" })
    )
    const result = check(entries)
    expect(result.ok ? "linearizable" : result).toBe("linearizable")
    expect(states).toHaveLength(3)
    // Timed rounds: each of the two rounds of an instance waited out its timer (3ΔI + ΔD with ΔI = 30 ms).
    expect(states[0]!.engine?.roundTimeP50Ms).toBeGreaterThan(60)
  }, 180_000)
})
