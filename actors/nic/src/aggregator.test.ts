import { describe, expect, it } from "vitest"
import { aggregate, createAggregator, type EngineDecision } from "./aggregator.js"

const feed = (engines: number, decisions: ReadonlyArray<EngineDecision<string>>) => {
  let state = createAggregator<string>(engines)
  const out: Array<string> = []
  for (const d of decisions) {
    const r = aggregate(state, d)
    state = r.state
    out.push(...r.ordered.flatMap((o) => o.values))
  }
  return out
}

describe("aggregator", () => {
  it("merges K engines by instance, then engine id, whatever the arrival order", () => {
    const decisions = [
      { engine: 1, instance: 1, values: ["b1"] },
      { engine: 0, instance: 2, values: ["a2"] },
      { engine: 0, instance: 1, values: ["a1"] },
      { engine: 1, instance: 2, values: ["b2"] }
    ]
    expect(feed(2, decisions)).toEqual(["a1", "b1", "a2", "b2"])
    expect(feed(2, [...decisions].reverse())).toEqual(["a1", "b1", "a2", "b2"])
  })

  it("waits for a slow engine instead of skipping it, and ignores duplicates", () => {
    expect(
      feed(2, [
        { engine: 0, instance: 1, values: ["a1"] },
        { engine: 0, instance: 2, values: ["a2"] }
      ])
    ).toEqual(["a1"])
    expect(
      feed(1, [
        { engine: 0, instance: 1, values: ["x"] },
        { engine: 0, instance: 1, values: ["x"] }
      ])
    ).toEqual(["x"])
  })
})
