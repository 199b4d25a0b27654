import { describe, expect, it } from "vitest"
import { medianBetween, slope } from "./soak.js"

describe("soak statistics", () => {
  it("medianBetween takes the median of the samples in [from, to) only", () => {
    const points = [
      [4.9, 500],
      [5, 150],
      [5.2, 220],
      [5.5, 160],
      [6, 900]
    ] as const
    expect(medianBetween(points, 5, 6)).toBe(160)
    expect(medianBetween(points, 5, 5.5)).toBe(185)
    expect(medianBetween(points, 7, 8)).toBeNaN()
  })

  it("slope is the least-squares growth per minute, zero for a flat or single-point series", () => {
    expect(
      slope([
        [0, 100],
        [1, 102],
        [2, 104]
      ])
    ).toBeCloseTo(2)
    expect(
      slope([
        [0, 150],
        [1, 220],
        [2, 150],
        [3, 220]
      ])
    ).toBeCloseTo(14)
    expect(slope([[0, 1]])).toBe(0)
  })
})
