import { describe, expect, it } from "vitest"
import type { Chain, SnapshotRef } from "./chain.js"
import { ClientState } from "./client-state.js"
import type { StoreConfig } from "./coordination.js"
import { type CommandEntry, commitTs } from "./types.js"

const config: StoreConfig = {
  formatVersion: 1,
  conflictWindow: 64,
  timely: { snapshotEvery: 4, epsilon: 0.5 },
  snapshotTtlMs: 1000,
  layout: { commandSegmentRecords: 100, stateSegmentRecords: 100, metaSegmentRecords: 10 }
}

const put = (index: number, key: string, value: string): CommandEntry => ({
  index,
  writer: "w",
  batch: index,
  intentions: [
    { snapshotEntries: index, checked: [], writes: [{ key, value: new TextEncoder().encode(value) }], tx: index }
  ]
})

const ref = (from: number, to: number): SnapshotRef => ({
  from,
  to,
  segment: `s${from}-${to}`,
  indexPosition: 0,
  keys: 1,
  bytes: 1,
  blocks: 1
})
const chainTo = (to: number): Chain => ({
  snapshots: [ref(0, to)],
  replayFrom: { ordinal: 0, position: to, index: to }
})

/** A client that started at chain [0,2) and applied entries 2..5, k written at 3. */
const started = () => {
  const s = new ClientState()
  s.resetView(config, 0)
  s.start(config, chainTo(2))
  s.applyEntry(put(2, "a", "a"))
  s.applyEntry(put(3, "k", "v3"))
  s.applyEntry(put(4, "b", "b"))
  s.applyEntry(put(5, "b", "b2"))
  return s
}

describe("ClientState's read path", () => {
  it("answers a key in the tail at once, and Moved when it changed at or after the snapshot", () => {
    const s = started()
    expect(s.read("k", 6)).toMatchObject({ _tag: "Value", state: { modified: commitTs(3, 0) } })
    expect(s.read("k", 3)).toEqual({ _tag: "Moved" })
    expect(s.read("z", 6)).toEqual({ _tag: "Lookup", chain: s.adopted })
  })

  it("re-checks the tail after a lookup, and looks again on a chain adopted meanwhile (issue 23)", () => {
    const s = started()
    const first = s.read("k", 6)
    expect(first._tag).toBe("Value")
    // A lookup of another key races an adoption of a chain that covers k's write: k leaves the tail.
    const lookup = s.read("z", 6)
    const newer = chainTo(5)
    s.applyStateRecords([{ _tag: "Chain", index: 0, chain: newer, owner: "x" }], 0)
    expect(s.adoptable()).toBe(newer)
    expect(s.adopt(newer)).toBe(true)
    expect(s.replay.get("k")).toBeUndefined()
    // The lookup on the old chain is not an answer; k's read is a lookup now, never "absent" from the tail.
    expect(s.afterLookup("z", 6, lookup._tag === "Lookup" ? lookup.chain : s.adopted, undefined)).toEqual({
      _tag: "Lookup",
      chain: newer
    })
    expect(s.read("k", 6)).toEqual({ _tag: "Lookup", chain: newer })
    // b, written at 5 (after the new chain's end), stays in the tail.
    expect(s.read("b", 6)).toMatchObject({ _tag: "Value", state: { modified: commitTs(5, 0) } })
    // A snapshot state is checked against the snapshot too.
    expect(s.afterLookup("k", 6, newer, { value: undefined, modified: commitTs(3, 0) })).toMatchObject({
      _tag: "Value"
    })
    expect(s.afterLookup("k", 3, newer, { value: undefined, modified: commitTs(3, 0) })).toEqual({ _tag: "Moved" })
  })

  it("adopts only a chain the replay has reached, and never an older one", () => {
    const s = started()
    s.applyStateRecords([{ _tag: "Chain", index: 0, chain: chainTo(9), owner: "x" }], 0)
    expect(s.adoptable()).toBeUndefined()
    expect(s.adopt(s.view.chain)).toBe(false)
    expect(s.adopted.snapshots.at(-1)?.to).toBe(2)
  })
})
