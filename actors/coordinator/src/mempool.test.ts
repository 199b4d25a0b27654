import { createHash } from "node:crypto"
import { RejectReason, TransactionBody, YcsbRmw } from "@reef/proto"
import { fakeSigner } from "@reef/remora"
import { describe, expect, it } from "vitest"
import { blockDigest } from "./coordinator-driver.js"
import { defaultMempoolLimits, Mempool } from "./mempool.js"
import { ReceiptBook } from "./receipts.js"

const tx = (id: string, key = "ycsb/1") =>
  fakeSigner(
    TransactionBody.encode({
      id,
      readSet: [key],
      writeSet: [key],
      call: { contract: "ycsb.rmw", args: Buffer.from(YcsbRmw.encode({ field: 0, data: Buffer.alloc(1) }).finish()) },
      statelessCostUs: 0,
      statefulCostUs: 0
    }).finish(),
    true
  )

describe("the pool of accepted transactions", () => {
  it("refuses a duplicate id and a full pool, each with its own reason, and keeps the others", () => {
    const pool = new Mempool({ ...defaultMempoolLimits, maxPending: 2 })
    expect(pool.submit(tx("a")).ok).toBe(true)
    const dup = pool.submit(tx("a"))
    expect(dup.ok || RejectReason[dup.rejection.reason]).toBe("REJECT_REASON_DUPLICATE_ID")
    expect(pool.submit(tx("b")).ok).toBe(true)
    const full = pool.submit(tx("c"))
    expect(full.ok || RejectReason[full.rejection.reason]).toBe("REJECT_REASON_OVERLOADED")
    expect(pool.take(10).map((t) => t.id)).toEqual(["a", "b"])
  })

  it("a rejected block's transactions go first into the next block", () => {
    const pool = new Mempool()
    for (const id of ["a", "b", "c"]) pool.submit(tx(id))
    const block = pool.take(2)
    pool.requeue(block)
    expect(pool.take(3).map((t) => t.id)).toEqual(["a", "b", "c"])
  })
})

describe("receipts", () => {
  it("answer every waiter once, stay readable, and say pending before", () => {
    const book = new ReceiptBook(2)
    const heard: Array<string> = []
    book.accepted("a", 1, (r) => heard.push(`first ${r.txId}`))
    expect(book.lookup("a")).toBe("pending")
    expect(book.wait("a", (r) => heard.push(`second ${r.txId}`))).toBe(true)
    expect(book.wait("zz", () => {})).toBe(false)
    const r = book.complete({
      txId: "a",
      status: 1,
      seq: 7,
      height: 3,
      blockDigest: "digest",
      committedAtMs: 2,
      worker: "w1",
      leaseTransfers: 0,
      detail: "",
      completedAtMs: 4
    })
    expect(r).toMatchObject({ acceptedAtMs: 1, committedAtMs: 2, blockDigest: "digest", seq: 7 })
    expect(heard).toEqual(["first a", "second a"])
    expect(book.lookup("a")).toEqual(r)
  })
})

describe("block digest", () => {
  it("is SHA-256 over each transaction's id, a NUL and its signature, in block order", () => {
    const pool = new Mempool(defaultMempoolLimits)
    for (const id of ["a", "bé", "c"]) pool.submit(tx(id, `ycsb/${id.length}`))
    const txs = pool.take(3)
    const h = createHash("sha256")
    for (const t of txs) h.update(t.id).update("\u0000").update(t.payload.signature)
    expect(blockDigest(txs)).toBe(h.digest("hex"))
  })
})
