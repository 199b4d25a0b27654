import { describe, expect, it } from "vitest"
import { decide, ModificationWindow } from "./conflict.js"
import { CommandReplay } from "./replay.js"
import { type CommandEntry, checkedKeys, commitTs, type Intention } from "./types.js"

const v = (s: string) => new TextEncoder().encode(s)
const tx = (
  snapshotEntries: number,
  checked: ReadonlyArray<string>,
  writes: ReadonlyArray<string>,
  id = 0
): Intention => ({
  snapshotEntries,
  checked,
  writes: writes.map((key) => ({ key, value: v(`${key}@${id}`) })),
  tx: id
})
const entry = (index: number, ...intentions: ReadonlyArray<Intention>): CommandEntry => ({
  index,
  writer: "w",
  batch: index,
  intentions
})

describe("OCC over the log (§4.1)", () => {
  it("SS: a key in T's read set written between s(T) and c(T) aborts T", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 100 })
    r.apply(entry(0, tx(0, [], ["x"], 1)))
    // T read x at s(T) = 1 (after entry 0); U writes x in entry 1; T commits in entry 2.
    r.apply(entry(1, tx(1, [], ["x"], 2)))
    const [outcome] = r.apply(entry(2, tx(1, checkedKeys("serializable", ["x"], []), ["y"], 3)))
    expect(outcome).toEqual({ _tag: "Aborted", ts: commitTs(2, 0), reason: "conflict", key: "x" })
    expect(r.get("y")).toBeUndefined()
  })

  it("SS: a write before s(T) does not conflict: 'if the last modification time of a key is before s(T) ... T is committed'", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 100 })
    r.apply(entry(0, tx(0, [], ["x"], 1)))
    const [outcome] = r.apply(entry(1, tx(1, ["x"], ["x"], 2)))
    expect(outcome).toEqual({ _tag: "Committed", ts: commitTs(1, 0) })
    expect(r.get("x")).toEqual({ value: v("x@2"), modified: commitTs(1, 0) })
  })

  it("intentions of one entry are ordered by slot: a later slot sees an earlier one's writes", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 100 })
    const outcomes = r.apply(entry(0, tx(0, [], ["x"], 1), tx(0, ["x"], ["z"], 2)))
    expect(outcomes.map((o) => o._tag)).toEqual(["Committed", "Aborted"])
  })

  it("SI checks the write set only: two transactions reading each other's keys both commit (write skew)", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 100 })
    const t1 = tx(0, checkedKeys("snapshot", ["x", "y"], [{ key: "x", value: v("1") }]), ["x"], 1)
    const t2 = tx(0, checkedKeys("snapshot", ["x", "y"], [{ key: "y", value: v("1") }]), ["y"], 2)
    expect(r.apply(entry(0, t1, t2)).map((o) => o._tag)).toEqual(["Committed", "Committed"])
    // Under SS the same pair is refused: the second read x, which the first wrote.
    const s = new CommandReplay({ base: 0, next: 0, window: 100 })
    const u1 = tx(0, checkedKeys("serializable", ["x", "y"], []), ["x"], 1)
    const u2 = tx(0, checkedKeys("serializable", ["x", "y"], []), ["y"], 2)
    expect(s.apply(entry(0, u1, u2)).map((o) => o._tag)).toEqual(["Committed", "Aborted"])
  })

  it("SI: two transactions writing the same key from one snapshot: the second aborts (no lost update)", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 100 })
    const a = tx(0, checkedKeys("snapshot", [], [{ key: "x", value: v("a") }]), ["x"], 1)
    const b = tx(0, checkedKeys("snapshot", [], [{ key: "x", value: v("b") }]), ["x"], 2)
    expect(r.apply(entry(0, a)).map((o) => o._tag)).toEqual(["Committed"])
    expect(r.apply(entry(1, b)).map((o) => o._tag)).toEqual(["Aborted"])
  })

  it("a snapshot older than the store's conflict window aborts, whatever it touched", () => {
    expect(decide(tx(0, [], ["x"]), 10, 10, () => undefined)).toEqual({ _tag: "Abort", reason: "snapshot-too-old" })
    expect(decide(tx(1, [], ["x"]), 10, 10, () => undefined)).toEqual({ _tag: "Commit" })
  })

  it("an intention claiming a snapshot after its own entry is refused as invalid", () => {
    expect(decide(tx(11, [], ["x"]), 10, 10, () => undefined)).toEqual({ _tag: "Abort", reason: "invalid-snapshot" })
  })

  it("the window forgets modifications that no later decision can ask about, and only those", () => {
    const w = new ModificationWindow(3)
    w.record(0, "a", commitTs(0, 0))
    w.record(1, "b", commitTs(1, 0))
    w.record(2, "a", commitTs(2, 0))
    w.advance(2)
    expect(w.get("a")).toBe(commitTs(2, 0))
    w.advance(3)
    expect(w.get("b")).toBe(commitTs(1, 0))
    w.advance(4)
    expect(w.get("b")).toBeUndefined()
    expect(w.get("a")).toBe(commitTs(2, 0))
    w.advance(5)
    expect(w.size).toBe(0)
  })
})
