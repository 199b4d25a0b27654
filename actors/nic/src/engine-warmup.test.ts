import { describe, expect, it } from "vitest"
import { warmUpEngine } from "./engine-warmup.js"

describe("engine warm-up", () => {
  it("runs its private group through the requested instances, with client values, on a virtual clock", () => {
    const report = warmUpEngine({ instances: 10, valuesPerInstance: 16 })
    expect(report.instances).toBeGreaterThanOrEqual(10)
  })

  it("also runs with rounds closed on all heard", () => {
    expect(warmUpEngine({ instances: 10, closeOnAllHeard: true }).instances).toBeGreaterThanOrEqual(10)
  })
})
