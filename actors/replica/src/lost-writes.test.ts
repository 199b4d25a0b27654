import { describe, expect, it } from "vitest"
import type { HistoryEntry } from "./history.js"
import { formatLostWrite, lostWrites } from "./lost-writes.js"

const set = (value: string, invokeMs: number, completeMs?: number): HistoryEntry => ({
  process: value,
  op: { _tag: "Set", key: "k", value, ...(completeMs === undefined ? {} : { output: { ok: true } }) },
  invokeMs,
  ...(completeMs === undefined ? {} : { completeMs })
})

describe("lostWrites", () => {
  it("accepts the last acknowledged write, or one concurrent with it or later (unknown outcomes too)", () => {
    const history = [set("a", 0, 1), set("b", 2, 5), set("c", 4, 8), set("d", 6)]
    for (const final of ["b", "c", "d"]) expect(lostWrites(history, new Map([["k", final]]))).toEqual([])
  })

  it("reports an acknowledged write undone by an older value, a missing key, or a failed CAS's value", () => {
    const history: Array<HistoryEntry> = [
      set("a", 0, 1),
      set("b", 2, 3),
      {
        process: "x",
        op: { _tag: "Cas", key: "k", expected: "zz", value: "e", output: { swapped: false, current: "b" } },
        invokeMs: 4,
        completeMs: 5
      }
    ]
    for (const final of ["a", null, "e"]) {
      const lost = lostWrites(history, new Map([["k", final]]))
      expect(lost.map((l) => l.lost.op)).toEqual([history[1]!.op])
    }
    expect(formatLostWrite(lostWrites(history, new Map([["k", "a"]]))[0]!)).toBe(
      'key "k" ends "a", losing pb [2.0, 3.0] set("k", "b")'
    )
  })

  it("an acknowledged delete leaves the key absent; a key nobody acknowledged writing is not checked", () => {
    const history: Array<HistoryEntry> = [
      set("a", 0, 1),
      { process: 1, op: { _tag: "Delete", key: "k", output: { existed: true } }, invokeMs: 2, completeMs: 3 },
      { process: 2, op: { _tag: "Set", key: "j", value: "x" }, invokeMs: 0 }
    ]
    expect(lostWrites(history, new Map([["k", null]]))).toEqual([])
    expect(lostWrites(history, new Map([["k", "a"]]))).toHaveLength(1)
    expect(lostWrites(history, new Map([["j", null]]))).toEqual([])
  })
})
