import { describe, expect, it } from "vitest"
import { chargedBlockMs } from "./ira.js"

describe("chargedBlockMs", () => {
  it("shares a batch's wait over all its blocks, and the charges add up to the wall time", () => {
    // Batch 1: blocks applied at 14, 16, 18 ms after a 10 ms wait; batch 2: 5 ms wait, then 22+5, ...
    const execMs = [4, 2, 2, 2, 2, 2]
    const doneMs = [14, 16, 18, 25, 27, 29]
    const charged = chargedBlockMs(doneMs, execMs, 3)
    const expected = [4 + 10 / 3, 2 + 10 / 3, 2 + 10 / 3, 2 + 5 / 3, 2 + 5 / 3, 2 + 5 / 3]
    for (const [i, x] of charged.entries()) expect(x).toBeCloseTo(expected[i]!, 9)
    expect(charged.reduce((a, b) => a + b, 0)).toBeCloseTo(29, 9)
  })

  it("charges nothing extra where blocks follow one another with no wait (the baseline)", () => {
    expect(chargedBlockMs([3, 5, 9], [3, 2, 4], 2)).toEqual([3, 2, 4])
  })
})
