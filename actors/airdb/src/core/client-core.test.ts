import { describe, expect, it } from "vitest"
import { ClientCore, type CoreEffect } from "./client-core.js"
import { emptyStateView, type StoreConfig } from "./coordination.js"
import type { CommandEntry, Intention } from "./types.js"

const config: StoreConfig = {
  formatVersion: 1,
  conflictWindow: 64,
  timely: { snapshotEvery: 100, epsilon: 0.5 },
  snapshotTtlMs: 1000,
  layout: { commandSegmentRecords: 100, stateSegmentRecords: 100, metaSegmentRecords: 10 }
}

const core = (writer = "w") =>
  new ClientCore(
    { writer, config, minSyncGapMs: 10, maxBatchIntentions: 16, maxBatchBytes: 1024, readRecords: 4, snapshots: true },
    { ...emptyStateView, config }
  )

const put = (snapshot: number, key: string, tx = 1): Intention => ({
  snapshotEntries: snapshot,
  checked: [key],
  writes: [{ key, value: new TextEncoder().encode(key) }],
  tx
})

const only = <T extends CoreEffect["_tag"]>(out: ReadonlyArray<CoreEffect>, tag: T) =>
  out.filter((e): e is Extract<CoreEffect, { _tag: T }> => e._tag === tag)

describe("the AirDB client core", () => {
  it("sends riders who board together on one bus, and the next bus no sooner than the gap", () => {
    const c = core()
    const first = c.step(0, { _tag: "Ride", id: 1 })
    expect(only(first, "ReadLog")).toEqual([{ _tag: "ReadLog", sync: 1, from: 0, max: 4, first: true }])
    expect(only(c.step(1, { _tag: "Ride", id: 2 }), "ReadLog")).toEqual([])
    expect(only(c.step(1, { _tag: "Ride", id: 3 }), "ReadLog")).toEqual([])
    const back = c.step(2, { _tag: "LogRead", sync: 1, from: 0, entries: [], atTail: true })
    expect(only(back, "Reply")).toEqual([{ _tag: "Reply", id: 1, reply: { _tag: "Tail", tail: 0 } }])
    // Riders 2 and 3 boarded after bus 1 left: they wait for bus 2, which leaves at 0 + gap.
    expect(only(back, "WakeAt")).toEqual([{ _tag: "WakeAt", atMs: 10 }])
    const second = c.step(10, { _tag: "Tick" })
    expect(only(second, "ReadLog")).toEqual([{ _tag: "ReadLog", sync: 2, from: 0, max: 4, first: true }])
    const entry: CommandEntry = { index: 0, writer: "x", batch: 1, intentions: [put(0, "k")] }
    const arrived = c.step(11, { _tag: "LogRead", sync: 2, from: 0, entries: [entry], atTail: true })
    expect(only(arrived, "Reply").map((r) => r.reply)).toEqual([
      { _tag: "Tail", tail: 1 },
      { _tag: "Tail", tail: 1 }
    ])
  })

  it("keeps reading within one sync until a read comes back short", () => {
    const c = core()
    c.step(0, { _tag: "Ride", id: 1 })
    const full = Array.from(
      { length: 4 },
      (_, i): CommandEntry => ({ index: i, writer: "x", batch: i, intentions: [] })
    )
    const more = c.step(1, { _tag: "LogRead", sync: 1, from: 0, entries: full, atTail: false })
    expect(only(more, "ReadLog")).toEqual([{ _tag: "ReadLog", sync: 1, from: 4, max: 4, first: false }])
    expect(only(more, "Reply")).toEqual([])
    const done = c.step(2, { _tag: "LogRead", sync: 1, from: 4, entries: [], atTail: true })
    expect(only(done, "Reply")[0]!.reply).toEqual({ _tag: "Tail", tail: 4 })
  })

  it("acknowledges a commit only once its entry is appended and applied", () => {
    const c = core()
    const sent = c.step(0, { _tag: "Submit", id: 7, intention: put(0, "k"), bytes: 10 })
    const [append] = only(sent, "Append")
    expect(append!.entry).toMatchObject({ index: 0, writer: "w", batch: 1 })
    expect(only(sent, "Reply")).toEqual([])
    const done = c.step(1, { _tag: "Appended", seq: 1, index: 0 })
    expect(only(done, "Reply")).toEqual([
      { _tag: "Reply", id: 7, reply: { _tag: "Outcome", outcome: { _tag: "Committed", ts: 0 } } }
    ])
    expect(c.next).toBe(1)
  })

  it("after a conflict, syncs and appends again at the new tail; the outcome is the log's", () => {
    const c = core()
    c.step(0, { _tag: "Submit", id: 7, intention: put(0, "k"), bytes: 10 })
    const conflict = c.step(1, {
      _tag: "AppendFailed",
      seq: 1,
      index: 0,
      kind: "conflict",
      failure: { _tag: "Unavailable", operation: "append", reason: "x", outcomeUnknown: false }
    })
    const [read] = only(conflict, "ReadLog")
    expect(read).toMatchObject({ from: 0 })
    // Someone else wrote k at 0: the retry at 1 carries the old snapshot and aborts on replay.
    const other: CommandEntry = { index: 0, writer: "x", batch: 1, intentions: [put(0, "k")] }
    const retry = c.step(2, { _tag: "LogRead", sync: read!.sync, from: 0, entries: [other], atTail: true })
    const [again] = only(retry, "Append")
    expect(again!.entry.index).toBe(1)
    const done = c.step(3, { _tag: "Appended", seq: 1, index: 1 })
    expect(only(done, "Reply")[0]!.reply).toMatchObject({
      _tag: "Outcome",
      outcome: { _tag: "Aborted", reason: "conflict" }
    })
  })

  it("settles an ambiguous append from the log: landed means no second append", () => {
    const c = core()
    const sent = c.step(0, { _tag: "Submit", id: 7, intention: put(0, "k"), bytes: 10 })
    const entry = only(sent, "Append")[0]!.entry
    const timeout = c.step(1, {
      _tag: "AppendFailed",
      seq: 1,
      index: 0,
      kind: "ambiguous",
      failure: { _tag: "Unavailable", operation: "append", reason: "timeout", outcomeUnknown: false }
    })
    const [wake] = only(timeout, "WakeAt")
    const tick = c.step(wake!.atMs, { _tag: "Tick" })
    const [read] = only(tick, "ReadLog")
    const found = c.step(wake!.atMs + 1, { _tag: "LogRead", sync: read!.sync, from: 0, entries: [entry], atTail: true })
    expect(only(found, "Append")).toEqual([])
    expect(only(found, "Reply")[0]!.reply).toEqual({ _tag: "Outcome", outcome: { _tag: "Committed", ts: 0 } })
  })

  it("a Get rides a bus, then reads at the tail it checked (a lookup when the tail lacks the key)", () => {
    const c = core()
    expect(only(c.step(0, { _tag: "Get", id: 1, key: "z", maxAttempts: 3 }), "Lookup")).toEqual([])
    const back = c.step(1, { _tag: "LogRead", sync: 1, from: 0, entries: [], atTail: true })
    const [lookup] = only(back, "Lookup")
    expect(lookup).toMatchObject({ id: 1, key: "z" })
    const answer = c.step(2, { _tag: "Looked", id: 1, chain: lookup!.chain, state: undefined })
    expect(only(answer, "Reply")[0]!.reply).toEqual({ _tag: "Value", state: undefined, snapshot: 0 })
  })

  it("adopts a chain once its indexes are loaded; a failed load waits for a newer chain", () => {
    const c = core()
    const snap = (from: number, to: number) => ({
      from,
      to,
      segment: `s${from}-${to}`,
      indexPosition: 0,
      keys: 1,
      bytes: 1,
      blocks: 1
    })
    const entries = Array.from(
      { length: 3 },
      (_, i): CommandEntry => ({ index: i, writer: "x", batch: i, intentions: [] })
    )
    c.step(0, { _tag: "Ride", id: 1 })
    c.step(1, { _tag: "LogRead", sync: 1, from: 0, entries, atTail: true })
    const chain1 = { snapshots: [snap(0, 2)], replayFrom: { ordinal: 0, position: 2, index: 2 } }
    const asked = c.step(2, { _tag: "StateRecords", records: [{ _tag: "Chain", index: 0, chain: chain1, owner: "x" }] })
    expect(only(asked, "LoadIndexes")).toEqual([{ _tag: "LoadIndexes", chain: chain1 }])
    // Its segments were merged away meanwhile: the load fails, and the same chain is not asked for at once.
    expect(only(c.step(3, { _tag: "IndexesFailed", chain: chain1 }), "LoadIndexes")).toEqual([])
    const chain2 = { snapshots: [snap(0, 3)], replayFrom: { ordinal: 0, position: 3, index: 3 } }
    const again = c.step(4, { _tag: "StateRecords", records: [{ _tag: "Chain", index: 1, chain: chain2, owner: "x" }] })
    expect(only(again, "LoadIndexes")).toEqual([{ _tag: "LoadIndexes", chain: chain2 }])
    const adopted = c.step(5, { _tag: "IndexesLoaded", chain: chain2 })
    expect(only(adopted, "Note").map((n) => n.note._tag)).toContain("Adopted")
    expect(c.state.adopted).toBe(chain2)
    expect(c.state.replay.base).toBe(3)
  })

  it("fails everything waiting, and every later request, once closed", () => {
    const c = core()
    c.step(0, { _tag: "Ride", id: 1 })
    c.step(0, { _tag: "Submit", id: 2, intention: put(0, "k"), bytes: 10 })
    const closed = c.step(1, { _tag: "Close" })
    expect(only(closed, "Reply").map((r) => [r.id, r.reply._tag])).toEqual([
      [1, "Failed"],
      [2, "Failed"]
    ])
    expect(only(c.step(2, { _tag: "Ride", id: 3 }), "Reply")[0]!.reply).toEqual({
      _tag: "Failed",
      failure: { _tag: "Closed" }
    })
  })
})
