import { defaultAutoscalerParams, POLICIES } from "@reef/remora"
import { describe, expect, it } from "vitest"
import { AUTOSCALER_DEFAULTS, coordinatorRole, POLICY_CHOICES, parsePoolRange } from "./coordinator.js"

describe("reef run coordinator", () => {
  it("offers exactly the placement policies the coordinator core has", () => {
    expect([...POLICY_CHOICES]).toEqual([...POLICIES])
  })

  it("defaults the autoscaler as the core does", () => {
    const { min: _min, max: _max, ...core } = defaultAutoscalerParams
    expect({ ...AUTOSCALER_DEFAULTS }).toEqual(core)
  })

  it("reads --autoscale MIN..MAX and says what is wrong with a bad range", () => {
    expect(parsePoolRange("2..4")).toEqual({ ok: true, value: { min: 2, max: 4 } })
    expect(parsePoolRange(" 1 .. 1 ")).toEqual({ ok: true, value: { min: 1, max: 1 } })
    for (const [raw, why] of [
      ["4", "MIN..MAX"],
      ["0..2", "MIN must be at least 1"],
      ["3..2", "MAX (2) must be at least MIN (3)"],
      ["a..b", "MIN..MAX"]
    ] as const) {
      const parsed = parsePoolRange(raw)
      expect(parsed.ok).toBe(false)
      expect(parsed.ok ? "" : parsed.error).toContain(why)
    }
  })

  it("reef up --autoscale starts MAX workers (or --workers, if more) and gives the coordinator the range", () => {
    const plan = (autoscale: { min: number; max: number } | undefined, workers: number) =>
      coordinatorRole.up!.plan({
        workers,
        "worker-cores": 4,
        "remora-consensus": "window",
        "execution-port": 7401,
        autoscale
      } as never)
    const scaled = plan({ min: 1, max: 5 }, 3)
    expect(scaled.filter((a) => a.role === "worker").map((a) => a.id)).toEqual(["w1", "w2", "w3", "w4", "w5"])
    expect(scaled.find((a) => a.role === "coordinator")!.args).toEqual(["--autoscale", "1..5"])
    expect(plan({ min: 1, max: 2 }, 3).filter((a) => a.role === "worker")).toHaveLength(3)
    expect(plan(undefined, 3).find((a) => a.role === "coordinator")!.args).toEqual([])
  })

  it("refuses autoscale tuning without --autoscale, a band upside down, and autoscaling symmetric workers", () => {
    const base = {
      consensus: "window",
      "popuc-min-replicas": 1,
      "popuc-group": "kv",
      "in-memory": false,
      architecture: "asymmetric",
      "autoscale-high": AUTOSCALER_DEFAULTS.highLoad,
      "autoscale-low": AUTOSCALER_DEFAULTS.lowLoad,
      "autoscale-sustain": AUTOSCALER_DEFAULTS.sustain,
      "autoscale-cooldown-ms": AUTOSCALER_DEFAULTS.coolDownMs,
      "autoscale-every-ms": 1_000
    }
    const validate = (input: Record<string, unknown>) => coordinatorRole.validate!({ ...base, ...input } as never, "x1")
    const range = { min: 1, max: 3 }
    expect(validate({ autoscale: range })).toBeUndefined()
    expect(validate({ "autoscale-high": 900 })).toContain("need --autoscale")
    expect(validate({ autoscale: range, "autoscale-low": 900, "autoscale-high": 900 })).toContain("must be below")
    expect(validate({ autoscale: range, architecture: "symmetric" })).toContain("asymmetric")
  })
})
