import { describe, expect, it } from "vitest"
import { emptyPartialState, mergeStates, NotAdjacentError, type PartialState } from "./partial-state.js"
import { CommandReplay } from "./replay.js"
import { type CommandEntry, commitTs } from "./types.js"

const v = (s: string) => new TextEncoder().encode(s)
const put = (index: number, ...kv: Array<[string, string | undefined]>): CommandEntry => ({
  index,
  writer: "w",
  batch: index,
  intentions: [
    {
      snapshotEntries: index,
      checked: [],
      tx: index,
      writes: kv.map(([key, value]) => ({ key, value: value === undefined ? undefined : v(value) }))
    }
  ]
})

/** Φ(from,to] by replaying entries from..to-1 from the given base. */
const replayRange = (entries: ReadonlyArray<CommandEntry>, from: number, to: number): PartialState => {
  const r = new CommandReplay({ base: from, next: from, window: 1000 })
  for (const e of entries.slice(from, to)) r.apply(e)
  return r.snapshot()
}

describe("partial states (§3.2, §4.2)", () => {
  const log = [
    put(0, ["a", "1"], ["b", "1"]),
    put(1, ["a", "2"]),
    put(2, ["b", undefined], ["c", "3"]),
    put(3, ["a", "4"])
  ]

  it("Φ(0,j] = Φ(0,k] ⊕ Φ(k,j]: merging the two halves equals replaying the whole log", () => {
    for (let k = 0; k <= log.length; k++) {
      const merged = mergeStates(replayRange(log, 0, k), replayRange(log, k, log.length))
      expect(merged).toEqual(replayRange(log, 0, log.length))
    }
  })

  it("the right operand upserts the left, including the last modification time", () => {
    const merged = mergeStates(replayRange(log, 0, 2), replayRange(log, 2, 4))
    expect(merged.keys.get("a")).toEqual({ value: v("4"), modified: commitTs(3, 0) })
    expect(merged.keys.get("b")).toEqual({ value: undefined, modified: commitTs(2, 0) })
  })

  it("a merged state is again a state, which allows recursive compaction", () => {
    const s = [0, 1, 2, 3].map((i) => replayRange(log, i, i + 1))
    const leftFirst = mergeStates(mergeStates(mergeStates(s[0]!, s[1]!), s[2]!), s[3]!)
    const pairs = mergeStates(mergeStates(s[0]!, s[1]!), mergeStates(s[2]!, s[3]!))
    expect(pairs).toEqual(leftFirst)
  })

  it("refuses states that do not meet", () => {
    expect(() => mergeStates(replayRange(log, 0, 1), replayRange(log, 2, 3))).toThrow(NotAdjacentError)
  })

  it("a state from 0 shadows nothing older, so a merge into it may drop deletions", () => {
    const merged = mergeStates(replayRange(log, 0, 2), replayRange(log, 2, 4), { dropTombstones: true })
    expect(merged.keys.has("b")).toBe(false)
    expect(emptyPartialState(5)).toEqual({ from: 5, to: 5, keys: new Map() })
  })
})
