import { describe, expect, it } from "vitest"
import { simBackend } from "./remora/backends.js"
import { runFigures } from "./remora/figures.js"

describe("bench remora, a tiny run of Figs. 4-7 on the simulator", () => {
  it("measures every configuration, and the window hides the stateless part's latency", async () => {
    const data = await runFigures(
      simBackend(true, 4),
      { objects: [2], zipfs: [0.9], workerCounts: [1, 2], workers: 2 },
      20,
      () => {}
    )
    expect(data.policies.map((p) => p.policy)).toEqual(["round-robin", "random", "zeus", "hermes-nr", "sfs"])
    for (const p of data.policies) expect(p.tps).toBeGreaterThan(0)
    expect(data.separation.map((s) => `${s.mode} ${s.ratio}`)).toEqual([
      "none 1",
      "worker 1",
      "coordinator 1",
      "none 4",
      "worker 4",
      "coordinator 4"
    ])
    const p50 = (config: string) => data.latency.find((l) => l.config === config)!.p50
    // Virtual time: the same seed gives the same latencies, and the stateless part (8 ms here) runs in the
    // window before the commit instead of after it.
    expect(p50("Post-Sep + Post-Sched") - p50("Pre-Sep + Pre-Sched")).toBeGreaterThan(data.latencyStatelessMs / 2)
    expect(data.architecture.map((a) => a.workers)).toEqual([1, 2])
    for (const a of data.architecture) {
      expect(a.asymmetric).toBeGreaterThan(0)
      expect(a.symmetric).toBeGreaterThan(0)
    }
    expect(data.symmetricSchedulingCostUs).toBe(80)
  }, 120_000)
})
