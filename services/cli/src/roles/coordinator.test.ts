import { defaultAutoscalerParams, POLICIES } from "@reef/remora"
import { describe, expect, it } from "vitest"
import { AUTOSCALER_DEFAULTS, POLICY_CHOICES, parsePoolRange } from "./coordinator.js"

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
})
