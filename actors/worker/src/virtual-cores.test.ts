import { describe, expect, it } from "vitest"
import { VirtualCoreTimers } from "./virtual-cores.js"

describe("virtual core timers", () => {
  it("end each unit after its synthetic cost, earliest first, with the stateless check's result", async () => {
    const ended: Array<[number, boolean]> = []
    const timers = new VirtualCoreTimers((unit, valid) => ended.push([unit, valid]))
    const started = performance.now()
    timers.start(1, 30_000, true)
    timers.start(2, 10_000, false)
    timers.start(3, 20_000, true)
    while (ended.length < 3 && performance.now() - started < 5_000) await new Promise((r) => setTimeout(r, 2))
    expect(ended).toEqual([
      [2, false],
      [3, true],
      [1, true]
    ])
    expect(performance.now() - started).toBeGreaterThanOrEqual(29)
    timers.close()
  })

  it("stop firing once closed", async () => {
    const ended: Array<number> = []
    const timers = new VirtualCoreTimers((unit) => ended.push(unit))
    timers.start(1, 5_000, true)
    timers.close()
    await new Promise((r) => setTimeout(r, 20))
    expect(ended).toEqual([])
  })
})
