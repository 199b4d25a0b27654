import { describe, expect, it } from "vitest"
import { checkListAppend, type MicroOp, type Txn } from "./elle.js"

let clock = 0
const txn = (
  id: number,
  ops: ReadonlyArray<MicroOp>,
  type: Txn["type"] = "ok",
  at?: readonly [number, number]
): Txn => {
  const [invokedAt, completedAt] = at ?? [clock, clock + 1]
  clock += 2
  return { id, process: `p${id}`, type, ops, invokedAt, completedAt }
}
const a = (key: string, value: number): MicroOp => ({ f: "append", key, value })
const r = (key: string, ...value: Array<number>): MicroOp => ({ f: "read", key, value })
const types = (h: ReadonlyArray<Txn>, model: "strict-serializable" | "snapshot-isolation" = "strict-serializable") =>
  checkListAppend(h, model).anomalies.map((x) => x.type)

/** Concurrent transactions: all invoked at 0, completed at 100 (no real-time order among them). */
const together = (id: number, ops: ReadonlyArray<MicroOp>, type: Txn["type"] = "ok") => txn(id, ops, type, [0, 100])

describe("an Elle-style list-append checker", () => {
  it("accepts a serial history", () => {
    const h = [txn(1, [a("x", 1), a("y", 1)]), txn(2, [r("x", 1), a("x", 2)]), txn(3, [r("x", 1, 2), r("y", 1)])]
    expect(checkListAppend(h, "strict-serializable")).toMatchObject({ valid: true, anomalies: [] })
  })

  it("finds G0: two transactions appending to x and y in opposite orders (write cycle)", () => {
    const h = [
      together(1, [a("x", 1), a("y", 1)]),
      together(2, [a("x", 2), a("y", 2)]),
      together(3, [r("x", 1, 2), r("y", 2, 1)])
    ]
    expect(types(h)).toContain("G0")
    expect(types(h, "snapshot-isolation")).toContain("G0")
  })

  it("finds G1a: a read of an aborted transaction's append", () => {
    const h = [together(1, [a("x", 1)], "fail"), together(2, [r("x", 1)])]
    expect(types(h)).toContain("G1a")
  })

  it("finds G1b: a read of a transaction's intermediate state", () => {
    const h = [together(1, [a("x", 1), a("x", 2)]), together(2, [r("x", 1)]), together(3, [r("x", 1, 2)])]
    expect(types(h)).toContain("G1b")
  })

  it("finds G1c: a cycle of write-read and write-write dependencies", () => {
    // T1 appends x; T2 reads it and appends y; T1 read y after T2's append.
    const h = [together(1, [a("x", 1), r("y", 2)]), together(2, [r("x", 1), a("y", 2)])]
    expect(types(h)).toContain("G1c")
  })

  it("finds G-single: a lost update (both read [0], both appended)", () => {
    const h = [
      txn(0, [a("x", 0)]),
      together(1, [r("x", 0), a("x", 1)]),
      together(2, [r("x", 0), a("x", 2)]),
      txn(3, [r("x", 0, 1, 2)], "ok", [200, 201])
    ]
    expect(types(h)).toContain("G-single")
    expect(types(h, "snapshot-isolation")).toContain("G-single")
  })

  it("finds G2 (write skew) under strict serializability, and allows it under snapshot isolation", () => {
    const h = [
      together(1, [r("x"), r("y"), a("x", 1)]),
      together(2, [r("x"), r("y"), a("y", 1)]),
      txn(3, [r("x", 1), r("y", 1)], "ok", [200, 201])
    ]
    expect(types(h)).toContain("G2")
    expect(checkListAppend(h, "snapshot-isolation").valid).toBe(true)
  })

  it("finds a real-time violation: a transaction that began after another committed does not see it", () => {
    const h = [
      txn(1, [a("x", 1)], "ok", [0, 10]),
      txn(2, [r("x")], "ok", [20, 30]),
      txn(3, [r("x", 1)], "ok", [40, 50])
    ]
    expect(types(h).some((t) => t.endsWith("-realtime"))).toBe(true)
    expect(checkListAppend(h, "snapshot-isolation").valid).toBe(true)
  })

  it("finds incompatible orders, duplicates and garbage", () => {
    const h = [
      together(1, [a("x", 1)]),
      together(2, [a("x", 2)]),
      together(3, [r("x", 1, 2)]),
      together(4, [r("x", 2, 1)]),
      together(5, [r("y", 7, 7)]),
      together(6, [r("z", 9)])
    ]
    const found = types(h)
    expect(found).toContain("incompatible-order")
    expect(found).toContain("duplicate-elements")
    expect(found).toContain("garbage-read")
  })

  it("treats an unknown outcome as possibly committed: its append may be read", () => {
    const h = [together(1, [a("x", 1)], "info"), together(2, [r("x", 1)])]
    expect(checkListAppend(h, "strict-serializable").valid).toBe(true)
  })
})
