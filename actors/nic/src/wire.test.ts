import { type PopucValueKind, PopucWire } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { clientValue, heartbeatValue, type RoundMsg } from "./core/index.js"
import { decodeWire, encodeWire } from "./wire.js"

describe("POPUC wire", () => {
  it("round-trips a round message and a sync-start message", () => {
    const round: RoundMsg = {
      _tag: "Round",
      instance: 7,
      round: 2,
      values: [clientValue("r1", 3, new Uint8Array([1, 2, 3])), heartbeatValue("r2", 7)],
      locked: ["r1", "r2"],
      decided: [{ proposer: "r2", seq: 1, kind: "client" }]
    }
    const decoded = decodeWire("g", encodeWire("g", "r1", round, 42))
    expect(decoded).toEqual({ _tag: "Ok", from: "r1", sentAtUs: 42, msg: round })
    const start = decodeWire("g", encodeWire("g", "r3", { _tag: "StartRequest" }, 1))
    expect(start._tag === "Ok" && start.msg).toEqual({ _tag: "StartRequest" })
  })

  it("rejects garbage, another group, missing parts and invalid values", () => {
    expect(decodeWire("g", new Uint8Array([0xff, 0xff, 0xff]))._tag).toBe("Invalid")
    const other = encodeWire("h", "r1", { _tag: "Start" }, 0)
    expect(decodeWire("g", other)).toMatchObject({ _tag: "Invalid", reason: expect.stringContaining("group") })
    const empty = PopucWire.encode({ group: "g", from: "r1", sentAtUs: 0, msg: undefined }).finish()
    expect(decodeWire("g", empty)).toMatchObject({ reason: "no message" })
    const zeroInstance = PopucWire.encode({
      group: "g",
      from: "r1",
      sentAtUs: 0,
      msg: { $case: "round", value: { instance: 0, round: 1, values: [], locked: [], decided: [] } }
    }).finish()
    expect(decodeWire("g", zeroInstance)._tag).toBe("Invalid")
    const badKind = PopucWire.encode({
      group: "g",
      from: "r1",
      sentAtUs: 0,
      msg: {
        $case: "round",
        value: {
          instance: 1,
          round: 1,
          values: [{ proposer: "r1", seq: 0, kind: 99 as PopucValueKind, payload: Buffer.alloc(0), members: [] }],
          locked: [],
          decided: []
        }
      }
    }).finish()
    expect(decodeWire("g", badKind)._tag).toBe("Invalid")
  })
})
