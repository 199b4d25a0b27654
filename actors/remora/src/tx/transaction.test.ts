import { RejectReason, TokenTransfer, TpccPayment, YcsbRmw } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { bodyOf, signed } from "../test/fixtures.js"
import { asBuffer } from "../workload/generators.js"
import { admit, isWrite } from "./transaction.js"

const rmw = YcsbRmw.encode({ field: 1, data: asBuffer(new Uint8Array([1, 2])) }).finish()
const transfer = (from: string, to: string, amount = 5) => TokenTransfer.encode({ from, to, amount }).finish()

const reasonOf = (tx: Parameters<typeof admit>[0]) => {
  const a = admit(tx)
  return a.ok ? "admitted" : RejectReason[a.rejection.reason]
}

describe("admission", () => {
  it("admits a well-formed transaction: keys sorted without duplicates, a write bit per key", () => {
    const a = admit(signed(bodyOf("t1", ["ycsb/9", "ycsb/2"], ["ycsb/2"], "ycsb.rmw", rmw)))
    expect(a.ok).toBe(true)
    if (!a.ok) return
    expect(a.meta.keys).toEqual(["ycsb/2", "ycsb/9"])
    expect(isWrite(a.meta.writes, 0)).toBe(true)
    expect(isWrite(a.meta.writes, 1)).toBe(false)
  })

  it("refuses each kind of bad input with its own reason", () => {
    const ok = signed(
      bodyOf("t1", ["tok/a", "tok/b"], ["tok/a", "tok/b"], "token.transfer", transfer("tok/a", "tok/b"))
    )
    expect(reasonOf(ok)).toBe("admitted")
    expect(reasonOf({ ...ok, body: Buffer.from([0xff, 0xff, 0xff]) })).toBe("REJECT_REASON_MALFORMED")
    expect(reasonOf({ ...ok, signature: Buffer.alloc(10) })).toBe("REJECT_REASON_MALFORMED")
    expect(reasonOf({ ...ok, publicKey: Buffer.alloc(31) })).toBe("REJECT_REASON_MALFORMED")
    expect(reasonOf(signed(bodyOf("", ["ycsb/1"], ["ycsb/1"], "ycsb.rmw", rmw)))).toBe("REJECT_REASON_MALFORMED")
    expect(reasonOf(signed(bodyOf("t 2", ["ycsb/1"], ["ycsb/1"], "ycsb.rmw", rmw)))).toBe("REJECT_REASON_MALFORMED")
    expect(reasonOf(signed(bodyOf("t2", [], [], "ycsb.rmw", rmw)))).toBe("REJECT_REASON_EMPTY_SETS")
    expect(reasonOf(signed(bodyOf("t2", ["x"], ["x"], "no.such", rmw)))).toBe("REJECT_REASON_UNKNOWN_CONTRACT")
    expect(reasonOf(signed(bodyOf("t2", ["ycsb/x"], ["ycsb/x"], "ycsb.rmw", new Uint8Array([0xff]))))).toBe(
      "REJECT_REASON_INVALID_ARGUMENTS"
    )
    // A contract declares only keys of its own namespace: a YCSB write cannot touch (mint) tokens.
    expect(reasonOf(signed(bodyOf("t2", ["ycsb/1", "tok/a"], ["tok/a"], "ycsb.rmw", rmw)))).toBe(
      "REJECT_REASON_FOREIGN_NAMESPACE"
    )
    expect(
      reasonOf(signed(bodyOf("t2", ["tok/a", "ycsb/1"], ["tok/a"], "token.transfer", transfer("tok/a", "tok/a"))))
    ).toBe("REJECT_REASON_FOREIGN_NAMESPACE")
    // The transfer writes tok/b, which only its read set declares.
    expect(
      reasonOf(signed(bodyOf("t2", ["tok/a", "tok/b"], ["tok/a"], "token.transfer", transfer("tok/a", "tok/b"))))
    ).toBe("REJECT_REASON_UNDECLARED_ACCESS")
    expect(reasonOf(signed(bodyOf("t2", ["tok/a"], ["tok/a"], "token.transfer", transfer("tok/a", "tok/c"))))).toBe(
      "REJECT_REASON_UNDECLARED_ACCESS"
    )
    const many = Array.from({ length: 65 }, (_, i) => `ycsb/${i}`)
    expect(reasonOf(signed(bodyOf("t2", many, many, "ycsb.rmw", rmw)))).toBe("REJECT_REASON_OVERSIZED")
    expect(reasonOf({ ...ok, body: Buffer.alloc(17 * 1024) })).toBe("REJECT_REASON_OVERSIZED")
  })

  it("checks TPC-C payments cover the warehouse, district and customer rows", () => {
    const args = TpccPayment.encode({
      warehouseId: 1,
      districtId: 2,
      customerWarehouseId: 1,
      customerDistrictId: 2,
      customerId: 3,
      amount: 100
    }).finish()
    const keys = ["tpcc/w/1", "tpcc/d/1/2", "tpcc/c/1/2/3"]
    expect(reasonOf(signed(bodyOf("p", keys, keys, "tpcc.payment", args)))).toBe("admitted")
    expect(reasonOf(signed(bodyOf("p", keys, keys.slice(1), "tpcc.payment", args)))).toBe(
      "REJECT_REASON_UNDECLARED_ACCESS"
    )
  })
})
