import { describe, expect, it } from "vitest"
import { coresBusy, longestStallMs } from "./load.js"

describe("longestStallMs", () => {
  it("is 0 for an empty timeline or one with no empty bucket", () => {
    expect(longestStallMs([])).toBe(0)
    expect(longestStallMs([5, 1, 7])).toBe(0)
  })

  it("measures the longest run of empty buckets", () => {
    expect(longestStallMs([9, 0, 8, 0, 0, 0, 7, 0, 0, 6])).toBe(300)
  })

  it("counts empty buckets at the start and at the end", () => {
    expect(longestStallMs([0, 0, 3, 4])).toBe(200)
    expect(longestStallMs([3, 0, 4, 0, 0, 0, 0])).toBe(400)
    expect(longestStallMs([0, 0, 0])).toBe(300)
  })

  it("scales with the bucket size", () => {
    expect(longestStallMs([1, 0, 0, 1], 250)).toBe(500)
  })
})

describe("coresBusy", () => {
  it("divides CPU seconds by wall seconds", () => {
    expect(coresBusy(3, 2)).toBe(1.5)
    expect(coresBusy(1, 0)).toBe(0)
  })
})
