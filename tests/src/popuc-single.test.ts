/**
 * A group of one (N = 1, t = 0), what `reef run replica --id r1` starts without `--members`: its engine has no
 * peer to calibrate against or agree with, and every instance decides in its first round. It must start and
 * serve linearizable writes and reads like any group.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { check, runWorkload, useGroup } from "./popuc-harness.js"

// Calibrated, not fixed: the calibration's agreement step is what a group of one used to hang in.
const fixture = useGroup({ n: 1, cluster: "single", calibrate: true })

describe("POPUC group of one", () => {
  it("starts, and concurrent clients produce a linearizable history", async () => {
    const { entries, states } = await Effect.runPromise(
      runWorkload(fixture.group, 4, "colocated", { opsPerClient: 10, keys: 3, seed: 11, prefix: "one-" })
    )
    const state = states[0]!
    const result = check(entries)
    expect(result.ok ? "linearizable" : result).toBe("linearizable")
    // t = 0: every instance decides in its first round (Alg. 2 decides at round t + 1 at the latest).
    expect(state.engine?.instancesDecided).toBeGreaterThan(0)
    expect(state.engine?.roundsDecided).toBe(state.engine?.instancesDecided)
  }, 120_000)
})
