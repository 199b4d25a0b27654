import { describe, expect, it } from "vitest"
import { gapsAround } from "./kv-load.js"

describe("gapsAround", () => {
  it("takes the interval a kill falls in whole, and the longest before it apart", () => {
    // completions every 10 ms, a kill at 1000 ms, nothing until 1450 ms
    const completions = [...Array.from({ length: 100 }, (_, i) => 10 * (i + 1) - 5), 1450, 1460]
    expect(gapsAround(completions, 1000, 1470)).toEqual({ afterMs: 1450 - 995, beforeMs: 10 })
  })

  it("counts a stall that runs to the end of the load", () => {
    expect(gapsAround([100, 200], 150, 5000).afterMs).toBe(4800)
  })
})
