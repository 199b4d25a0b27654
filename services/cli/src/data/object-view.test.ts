import { status } from "@grpc/grpc-js"
import { ExecutionCallError } from "@reef/coordinator"
import { tokenAccount, tpccGenesis, ycsbGenesis } from "@reef/remora"
import { describe, expect, it } from "vitest"
import { inNamespace, objectView } from "./object-view.js"
import { fieldsText } from "./tx.js"
import { explainExecutionError } from "./tx-client.js"

describe("reef tx get: an object as its contract sees it", () => {
  it("decodes a token account's balance as a number, a YCSB record and a TPC-C row by their layouts", () => {
    const account = objectView("tok/alice", tokenAccount(999_995, 1))
    expect(account).toEqual({ kind: "token account", fields: { balance: 999_995, transfers: 1 } })
    expect(fieldsText(account)).toBe("balance 999995, transfers 1")
    const record = objectView("ycsb/7", ycsbGenesis("ycsb/7"))
    expect(record.kind).toBe("YCSB record")
    expect(record.fields.updates).toBe(0)
    expect(record.fields.fields).toHaveLength(8)
    expect(objectView("tpcc/i/5", tpccGenesis("tpcc/i/5"))).toMatchObject({
      kind: "TPC-C item",
      fields: { priceCents: expect.any(Number) }
    })
    // Bytes that fit no layout are shown as they are.
    expect(objectView("tok/odd", Uint8Array.of(1, 2, 3))).toEqual({ kind: "bytes", fields: { hex: "010203" } })
    expect([inNamespace("tok/a"), inNamespace("ycsb/1"), inNamespace("tpcc/w/1"), inNamespace("nosuch/obj")]).toEqual([
      true,
      true,
      true,
      false
    ])
  })

  it("words an object in transfer as moving, and only a failed connection as an unreachable coordinator", () => {
    const explain = explainExecutionError({ gatewaySource: "cluster file" }, "127.0.0.1:7401")
    const error = (code: number, details: string) =>
      explain(new ExecutionCallError({ method: "GetObject", address: "127.0.0.1:7401", code, details }))
    const moving = error(status.UNAVAILABLE, "tok/alice is being transferred to w2; retry")
    expect(moving._tag).toBe("ObjectMovingError")
    expect(moving.message).toBe("tok/alice is moving to w2 (a lease transfer or a recovery): retry in a moment")
    const refused = error(
      status.UNAVAILABLE,
      "No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7401"
    )
    expect(refused.message).toMatch(/^cannot reach the coordinator at 127\.0\.0\.1:7401 /)
    const recovering = error(status.UNAVAILABLE, "coordinator x1 is recovering (block 12 of 40)")
    expect(recovering.message).toBe(
      "the coordinator at 127.0.0.1:7401 cannot answer now: coordinator x1 is recovering (block 12 of 40); retry"
    )
  })
})
