/**
 * The checker must be able to fail: each deliberately broken coordinator or worker is run until the simulator
 * reports the violation it causes. A seed range that finds nothing fails the test.
 */
import { describe, expect, it } from "vitest"
import type { Property } from "./checker.js"
import { type RunReport, replayCommand, runScenario } from "./scenarios.js"

const MAX_SEEDS = 60

const firstViolation = (scenario: string, mutant: string, from = 1): RunReport | undefined => {
  for (let seed = from; seed < from + MAX_SEEDS; seed++) {
    const r = runScenario(scenario, seed, { mutant })
    if (r.violation !== undefined) return r
  }
  return undefined
}

/** [what, mutant, scenario, properties it may break, first seed of the range searched (default 1)]. */
const cases: ReadonlyArray<readonly [string, string, string, ReadonlyArray<Property>, number?]> = [
  // Lemma 7 broken: a plan made for a different order is used anyway.
  [
    "adopts a window plan for a block committed out of order",
    "adopt-out-of-order",
    "scale-out",
    ["Lemma 4", "Theorem 3", "Theorem 1", "no crash"]
  ],
  ["hands the same version to two transactions", "reuse-version", "faults", ["no crash", "Lemma 4", "Theorem 3"]],
  ["does not record the new owner at dispatch", "stale-owner", "window", ["Theorem 3"]],
  ["runs a contract whose signature did not verify", "ignore-invalid-token", "window", ["Theorem 1"]],
  ["runs a duplicated dispatch again", "no-dispatch-dedup", "scale-out", ["Theorem 3"]],
  ["takes a stale duplicate transfer", "accept-stale-transfer", "faults", ["Theorem 1", "no crash", "Lemma 8"]],
  // Recovery (§4.6) and restarts: each broken part is caught with crashes on.
  [
    "replays from the wrong index (persist_index taken at dispatch, not at the epoch's end)",
    "persist-index-at-dispatch",
    "worker-crash",
    ["Lemma 4", "liveness", "Theorem 1", "Lemma 8", "committed once"]
  ],
  [
    "does not reclaim ownership in a recovery",
    "no-ownership-reclaim",
    "worker-crash",
    ["liveness", "Lemma 4", "Theorem 1"]
  ],
  [
    "keeps its seen-id set in memory only",
    "volatile-seen-ids",
    "coordinator-crash",
    ["committed once", "receipts stable"]
  ],
  [
    "takes a lease transfer sent in an older fence generation",
    "accept-old-generation",
    "crash-chaos",
    ["no crash", "Theorem 1", "Lemma 4", "liveness"],
    // A rare interleaving (a recovery while a transfer is in flight, the same fetch open again): seed 201 has it.
    196
  ],
  [
    "reads the state while a worker is still at an older generation",
    "read-state-when-idle",
    "crash-chaos",
    ["Theorem 1"],
    // A Fence lost in an outage just before a last recovery that replays nothing: seed 833 has it.
    830
  ],
  // Elasticity (§4.7, Alg. 5).
  [
    "retires a worker without the epoch-aligned reclaim",
    "retire-without-reclaim",
    "elastic",
    ["Theorem 1", "Theorem 3", "liveness", "no crash"]
  ],
  [
    "keeps dispatching to a retired worker",
    "dispatch-to-retired",
    "elastic",
    ["retired gets no work", "Theorem 3", "liveness"]
  ],
  [
    "starts a slow replay over for good (stall backstop on the watermark only, no back-off)",
    "stall-watermark-only",
    "slow-recovery",
    ["liveness"]
  ]
]

describe("the simulator catches broken cores", () => {
  for (const [what, mutant, scenario, properties, from] of cases) {
    it(`a core that ${what} (${mutant})`, () => {
      const r = firstViolation(scenario, mutant, from)
      expect(r, `no violation in ${MAX_SEEDS} seeds of ${scenario} from ${from ?? 1}`).toBeDefined()
      expect(properties).toContain(r!.violation!.property)
      // The failure is replayable: the same seed gives the same violation.
      expect(runScenario(scenario, r!.seed, { mutant }).violation).toEqual(r!.violation)
      expect(replayCommand(r!)).toBe(`pnpm sim remora --scenario ${scenario} --seed ${r!.seed} --mutant ${mutant}`)
    }, 120_000)
  }
  it("an unknown mutant is an error, not a clean run", () => {
    expect(() => runScenario("window", 1, { mutant: "no-such-mutant" })).toThrow(/unknown mutant/)
  })
})
