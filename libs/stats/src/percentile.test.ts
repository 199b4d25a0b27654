import { describe, expect, it } from "vitest"
import { ascending, percentile, percentileOfSorted } from "./percentile.js"

describe("percentile (nearest rank)", () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i) // 100, 99, ..., 1: order does not matter

  it("is the sample at rank ⌈p/100 · n⌉", () => {
    expect(percentile(hundred, 50)).toBe(50)
    expect(percentile(hundred, 99)).toBe(99)
    expect(percentile(hundred, 99.5)).toBe(100)
    expect(percentile(hundred, 1)).toBe(1)
  })

  it("is always a sample, never an interpolation", () => {
    expect(percentile([1, 2], 50)).toBe(1)
    expect(percentile([1, 2], 51)).toBe(2)
    expect(percentile([10, 20, 30, 40], 75)).toBe(30)
  })

  it("p100 is the maximum and p0 the minimum", () => {
    expect(percentile([3, 9, 1], 100)).toBe(9)
    expect(percentile([3, 9, 1], 0)).toBe(1)
    expect(percentile([5], 50)).toBe(5)
  })

  it("of 1000 samples, p99.9 ignores the single largest", () => {
    const samples = Array.from({ length: 1000 }, (_, i) => i + 1)
    expect(percentile(samples, 99.9)).toBe(999)
    expect(percentile(samples, 99.95)).toBe(1000)
    expect(percentile(samples, 10.1)).toBe(101)
  })

  it("reads typed arrays too", () => {
    expect(percentile(new Float64Array([0.5, 0.1, 0.3]), 50)).toBe(0.3)
  })

  it("an empty sample has no percentile (NaN)", () => {
    expect(percentile([], 50)).toBeNaN()
  })

  it("refuses p outside [0, 100]", () => {
    expect(() => percentile([1], 101)).toThrow(RangeError)
    expect(() => percentile([1], -1)).toThrow(RangeError)
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError)
  })

  it("leaves its input alone; percentileOfSorted reads an ascending copy", () => {
    const samples = [3, 1, 2]
    expect(percentile(samples, 100)).toBe(3)
    expect(samples).toEqual([3, 1, 2])
    const sorted = ascending(samples)
    expect(sorted).toEqual([1, 2, 3])
    expect(percentileOfSorted(sorted, 50)).toBe(2)
  })
})
