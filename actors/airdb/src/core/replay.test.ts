import { describe, expect, it } from "vitest"
import { CommandReplay, MissingHistoryError, OutOfOrderEntryError } from "./replay.js"
import { type CommandEntry, commitTs } from "./types.js"

const v = (s: string) => new TextEncoder().encode(s)
const rmw = (index: number, snapshot: number, key: string): CommandEntry => ({
  index,
  writer: "w",
  batch: index,
  intentions: [{ snapshotEntries: snapshot, checked: [key], writes: [{ key, value: v(`${index}`) }], tx: index }]
})

describe("replaying the command log", () => {
  const log = Array.from({ length: 40 }, (_, i) => rmw(i, Math.max(0, i - (i % 5)), `k${i % 7}`))

  it("applies entries in order only", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 8 })
    expect(() => r.apply(log[1]!)).toThrow(OutOfOrderEntryError)
  })

  it("a client starting at the chain's end, given the snapshots' last modifications, decides like one that saw the whole log", () => {
    const full = new CommandReplay({ base: 0, next: 0, window: 8 })
    const fullOutcomes = log.map((e) => full.apply(e))
    const base = 24
    // What the snapshots Φ(0, base] say: each key's last modification before the base.
    const prefix = new CommandReplay({ base: 0, next: 0, window: 8 })
    for (const e of log.slice(0, base)) prefix.apply(e)
    const snapshot = prefix.snapshot()
    const late = new CommandReplay({ base, next: base, window: 8 })
    const lateOutcomes = log.slice(base).map((e) => {
      const needed = late.historyNeeded([e])
      const history = needed.length === 0 ? undefined : new Map(needed.map((k) => [k, snapshot.keys.get(k)?.modified]))
      return late.apply(e, history)
    })
    expect(lateOutcomes).toEqual(fullOutcomes.slice(base))
    // Without the history it refuses to guess.
    const blind = new CommandReplay({ base, next: base, window: 8 })
    expect(() => {
      for (const e of log.slice(base)) blind.apply(e)
    }).toThrow(MissingHistoryError)
    // Its tail holds only what the entries from its base modified.
    for (const [key, state] of full.snapshot().keys) {
      if (state.modified >= commitTs(base, 0)) expect(late.get(key)).toEqual(state)
      else expect(late.get(key)).toBeUndefined()
    }
  })

  it("rebase drops tail keys a snapshot now holds and keeps those modified since", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 8 })
    for (const e of log.slice(0, 10)) r.apply(e)
    const before = r.snapshot()
    r.rebase(7)
    expect(r.base).toBe(7)
    for (const [key, state] of before.keys) {
      expect(r.get(key)).toEqual(state.modified >= commitTs(7, 0) ? state : undefined)
    }
    expect(() => r.rebase(11)).toThrow()
  })

  it("snapshot() is a copy Φ(base, next]: replay goes on without changing it", () => {
    const r = new CommandReplay({ base: 0, next: 0, window: 8 })
    r.apply(log[0]!)
    const s = r.snapshot()
    r.apply(log[1]!)
    expect(s.to).toBe(1)
    expect(s.keys.size).toBe(1)
  })
})
