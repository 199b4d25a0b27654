import { type PopucValueKind, PopucWire } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { clientValue, heartbeatValue, type RoundMsg } from "./core/index.js"
import { compactRound } from "./core/value-refs.js"
import { decodeWire, encodeWire, ownPayload, valueFromWire, valueToWire } from "./wire.js"

/** Every process of these tests is in its first (and only) incarnation. */
const TEST_INCARNATION = "0000000000000001"

describe("POPUC wire", () => {
  it("round-trips a round message and a sync-start message", () => {
    const round: RoundMsg = {
      _tag: "Round",
      instance: 7,
      attempt: 3,
      round: 2,
      values: [
        clientValue("r1", TEST_INCARNATION, 3, new Uint8Array([1, 2, 3])),
        heartbeatValue("r2", TEST_INCARNATION, 7)
      ],
      locked: ["r1", "r2"],
      decided: [{ proposer: "r2", incarnation: "00000000000000f2", seq: 1, kind: "client" }],
      decidedAttempt: 2
    }
    const decoded = decodeWire("g", encodeWire("g", "r1", round, 42))
    expect(decoded).toMatchObject({ _tag: "Ok", from: "r1", sentAtUs: 42 })
    // Payloads come out as the decoder's Buffers; with buffers of their own they equal the originals.
    const msg = decoded._tag === "Ok" && decoded.msg._tag === "Round" ? decoded.msg : undefined
    expect({ ...msg, values: msg?.values.map(ownPayload) }).toEqual({ ...round, refs: [] })
    // In its wire form (rounds 2 and later name client values by reference) it comes back the same.
    const compact = compactRound(round)
    const wire = decodeWire("g", encodeWire("g", "r1", { ...compact, _tag: "Round" }, 42))
    expect(compact.refs).toHaveLength(2)
    expect(wire._tag === "Ok" && wire.msg).toEqual({ ...compact, _tag: "Round" })
    const start = decodeWire("g", encodeWire("g", "r3", { _tag: "StartRequest" }, 1))
    expect(start._tag === "Ok" && start.msg).toEqual({ _tag: "StartRequest" })
  })

  it("round-trips a request for value bodies and its answer", () => {
    const value = clientValue("r1", TEST_INCARNATION, 3, new Uint8Array([1, 2, 3]))
    const refs = [{ proposer: "r1", incarnation: TEST_INCARNATION, seq: 3, kind: "client" as const }]
    const request = decodeWire("g", encodeWire("g", "r2", { _tag: "ValuesRequest", instance: 4, refs }, 0))
    expect(request._tag === "Ok" && request.msg).toEqual({ _tag: "ValuesRequest", instance: 4, refs })
    const answer = decodeWire("g", encodeWire("g", "r1", { _tag: "Values", instance: 4, values: [value] }, 0))
    const values = answer._tag === "Ok" && answer.msg._tag === "Values" ? answer.msg.values.map(ownPayload) : []
    expect(values).toEqual([value])
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
      msg: {
        $case: "round",
        value: {
          instance: 0,
          attempt: 0,
          round: 1,
          values: [],
          locked: [],
          decided: [],
          decidedAttempt: 0,
          refs: []
        }
      }
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
          attempt: 0,
          decidedAttempt: 0,
          round: 1,
          values: [
            {
              proposer: "r1",
              incarnation: "01",
              seq: 0,
              kind: 99 as PopucValueKind,
              payload: Buffer.alloc(0),
              members: []
            }
          ],
          locked: [],
          decided: [],
          refs: []
        }
      }
    }).finish()
    expect(decodeWire("g", badKind)._tag).toBe("Invalid")
    const badRef = encodeWire(
      "g",
      "r1",
      { _tag: "ValuesRequest", instance: 1, refs: [{ proposer: "", incarnation: "01", seq: 0, kind: "client" }] },
      0
    )
    expect(decodeWire("g", badRef)).toMatchObject({ _tag: "Invalid", reason: expect.stringContaining("reference") })
  })

  it("a value that leaves the engine gets a buffer of its own, exactly its payload's size", () => {
    const small = clientValue("r1", TEST_INCARNATION, 1, new Uint8Array([1, 2, 3]))
    const round: RoundMsg = { _tag: "Round", instance: 1, round: 1, values: [small], locked: [], decided: [] }
    const decoded = decodeWire("g", encodeWire("g", "r1", round, 0))
    const inMessage = decoded._tag === "Ok" && decoded.msg._tag === "Round" ? decoded.msg.values[0]! : undefined
    // Decoded in place: a small payload sits in a buffer shared with others (a structured clone copies it whole).
    expect(inMessage?.payload.buffer.byteLength).toBeGreaterThan(3)
    for (const own of [ownPayload(inMessage!), valueFromWire(valueToWire(inMessage!))!]) {
      expect(own).toEqual(small)
      expect(own.payload.buffer.byteLength).toBe(3)
    }
    const heartbeat = heartbeatValue("r2", TEST_INCARNATION, 1)
    expect(ownPayload(heartbeat)).toBe(heartbeat)
  })
})
