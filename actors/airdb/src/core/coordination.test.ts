import { describe, expect, it } from "vitest"
import { chainEnd, emptyChain, extendChain, isSuccessor, mergeIntoChain, pickMerge, type SnapshotRef } from "./chain.js"
import {
  applyStateRecord,
  confirmBegin,
  emptyStateView,
  planExtension,
  planMerge,
  type StateView,
  type StoreConfig
} from "./coordination.js"
import { admitsEntry, maxPendingEntries, needsSnapshot } from "./timely.js"

const config: StoreConfig = {
  formatVersion: 1,
  conflictWindow: 16,
  timely: { snapshotEvery: 10, epsilon: 0.2 },
  snapshotTtlMs: 1000,
  layout: { commandSegmentRecords: 100, stateSegmentRecords: 100, metaSegmentRecords: 100 }
}
const ref = (from: number, to: number, keys = to - from): SnapshotRef => ({
  from,
  to,
  segment: `s${from}-${to}`,
  indexPosition: 0,
  keys,
  bytes: keys * 10,
  blocks: 1
})
const loc = { ordinal: 0, position: 0, index: 0 }
const configured = (): StateView => applyStateRecord(emptyStateView, { _tag: "Config", index: 0, config }, 0)

describe("the timely-snapshot invariant (§3.3, Definition 1)", () => {
  const p = config.timely
  it("'If n − i_k ≥ B, the library initiates snapshot creation immediately'", () => {
    expect(needsSnapshot(19, 10, p)).toBe(false)
    expect(needsSnapshot(20, 10, p)).toBe(true)
  })
  it("'once n − i_k exceeds (1 + ε)B, it stops accepting new commands until enough have been materialized'", () => {
    expect(maxPendingEntries(p)).toBe(12)
    expect(admitsEntry(11, 0, p)).toBe(true) // the 12th entry: n = 12 = (1+ε)B
    expect(admitsEntry(12, 0, p)).toBe(false)
    expect(admitsEntry(12, 5, p)).toBe(true)
  })
})

describe("the snapshot chain", () => {
  it("extends at its end only, and a merge replaces adjacent snapshots by one", () => {
    const c1 = extendChain(emptyChain, ref(0, 10), loc)!
    const c2 = extendChain(c1, ref(10, 20), loc)!
    expect(extendChain(c2, ref(10, 30), loc)).toBeUndefined()
    expect(chainEnd(c2)).toBe(20)
    const merged = mergeIntoChain(c2, ref(0, 20))!
    expect(merged.snapshots.map((s) => [s.from, s.to])).toEqual([[0, 20]])
    expect(isSuccessor(c2, merged)).toBe(true)
    expect(mergeIntoChain(merged, ref(0, 10))).toBeUndefined()
    expect(isSuccessor(merged, c1)).toBe(false)
  })

  it("with the geometric merge policy the chain stays logarithmic in the number of snapshots", () => {
    let chain = emptyChain
    for (let i = 0; i < 1024; i++) {
      chain = extendChain(chain, ref(i * 10, (i + 1) * 10), loc)!
      for (let pair = pickMerge(chain); pair !== undefined; pair = pickMerge(chain)) {
        chain = mergeIntoChain(chain, ref(pair[0].from, pair[1].to, pair[0].keys + pair[1].keys))!
      }
      expect(chain.snapshots.length).toBeLessThanOrEqual(Math.ceil(Math.log2(i + 2)) + 1)
    }
  })
})

describe("distributed materialisation (§3.3 Coordination)", () => {
  it("a client that sees n − i_k ≥ B begins a snapshot of (i_k, n]", () => {
    expect(planExtension(configured(), 9, 0, "a")).toEqual({ _tag: "Idle" })
    expect(planExtension(configured(), 10, 0, "a")).toEqual({
      _tag: "Begin",
      begin: { from: 0, to: 10, merge: false, ttlMs: 1000, owner: "a" }
    })
  })

  it("'...to ensure no other libraries are in the process of creating the same or overlapping snapshots'", () => {
    const view = applyStateRecord(
      configured(),
      { _tag: "Begin", index: 1, begin: { from: 0, to: 10, ttlMs: 1000, owner: "a", merge: false } },
      100
    )
    expect(planExtension(view, 12, 500, "b")).toEqual({ _tag: "Wait", owner: "a", untilMs: 1100 })
    expect(planExtension(view, 12, 500, "a")._tag).toBe("Mine")
    expect(confirmBegin(view, 1, 500)).toBe(true)
  })

  it("'If no corresponding snapshot appears until L2's local time T + TTL, L2 may begin compaction' (no global clock)", () => {
    const begin = { from: 0, to: 10, ttlMs: 1000, owner: "l1", merge: false }
    // L2 and L3 read the begin at different times on their own clocks.
    const l2 = applyStateRecord(configured(), { _tag: "Begin", index: 1, begin }, 5_000)
    const l3 = applyStateRecord(configured(), { _tag: "Begin", index: 1, begin }, 70)
    expect(planExtension(l2, 11, 5_999, "l2")._tag).toBe("Wait")
    expect(planExtension(l2, 11, 6_000, "l2")).toMatchObject({ _tag: "Begin", begin: { from: 0, to: 11, owner: "l2" } })
    expect(planExtension(l3, 11, 1_070, "l3")._tag).toBe("Begin")
    // L2's own begin, appended after the expired one, is confirmed: the earlier one has expired for it.
    const withMine = applyStateRecord(
      l2,
      { _tag: "Begin", index: 2, begin: { from: 0, to: 11, ttlMs: 1000, owner: "l2", merge: false } },
      6_001
    )
    expect(confirmBegin(withMine, 2, 6_001)).toBe(true)
    expect(confirmBegin(withMine, 2, 5_500)).toBe(false)
  })

  it("the snapshot appearing completes the begin; a chain record that is no successor is ignored", () => {
    let view = applyStateRecord(
      configured(),
      { _tag: "Begin", index: 1, begin: { from: 0, to: 10, ttlMs: 1000, owner: "a", merge: false } },
      0
    )
    const chain = extendChain(emptyChain, ref(0, 10), loc)!
    view = applyStateRecord(view, { _tag: "Chain", index: 2, chain, owner: "a" }, 10)
    expect(view.begins).toEqual([])
    expect(chainEnd(view.chain)).toBe(10)
    view = applyStateRecord(
      view,
      { _tag: "Chain", index: 3, chain: extendChain(emptyChain, ref(0, 5), loc)!, owner: "x" },
      10
    )
    expect(chainEnd(view.chain)).toBe(10)
    expect(view.rejected).toBe(1)
  })

  it("a merge is coordinated like an extension", () => {
    let view = configured()
    view = applyStateRecord(
      view,
      { _tag: "Chain", index: 1, chain: extendChain(emptyChain, ref(0, 10), loc)!, owner: "a" },
      0
    )
    view = applyStateRecord(
      view,
      { _tag: "Chain", index: 2, chain: extendChain(view.chain, ref(10, 20), loc)!, owner: "a" },
      0
    )
    const m = planMerge(view, 0, "b", { ratio: 2, maxSnapshots: 8 })!
    expect(m.plan).toMatchObject({ _tag: "Begin", begin: { from: 0, to: 20, merge: true } })
    view = applyStateRecord(
      view,
      { _tag: "Begin", index: 3, begin: { from: 0, to: 20, ttlMs: 1000, owner: "b", merge: true } },
      0
    )
    expect(planMerge(view, 10, "c", { ratio: 2, maxSnapshots: 8 })!.plan._tag).toBe("Wait")
  })
})
