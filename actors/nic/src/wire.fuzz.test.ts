/**
 * The engine's decoder of round, sync-start and value-body messages (`decodeWire`) on hostile bytes: an `Invalid` with a
 * reason or a message the core can take, which encodes back to a message that decodes the same.
 */
import { isDeepStrictEqual } from "node:util"
import { fuzzDecoder, fuzzRuns } from "@reef/kernel/fuzz"
import { expect, it } from "vitest"
import { clientValue, heartbeatValue, type RoundMsg } from "./core/index.js"
import { compactRound } from "./core/value-refs.js"
import { type DecodedWire, decodeWire, encodeWire } from "./wire.js"

const INCARNATION = "0000000000000001"
const round: RoundMsg = {
  _tag: "Round",
  instance: 7,
  attempt: 3,
  round: 2,
  values: [clientValue("r1", INCARNATION, 3, new Uint8Array([1, 2, 3])), heartbeatValue("r2", INCARNATION, 7)],
  locked: ["r1", "r2"],
  decided: [{ proposer: "r2", incarnation: "00000000000000f2", seq: 1, kind: "client" }],
  decidedAttempt: 2
}
const seeds = [
  encodeWire("g", "r1", round, 42),
  encodeWire("g", "r2", { ...round, values: [], decided: [], round: 1 }, 1_700_000_000_000_000),
  encodeWire("g", "r3", { _tag: "StartRequest" }, 1),
  encodeWire("g", "r1", { _tag: "Start" }, 0),
  // Rounds 2 and later name values by reference; a receiver missing one asks for it.
  encodeWire("g", "r1", { ...compactRound(round), _tag: "Round" }, 42),
  encodeWire("g", "r2", { _tag: "ValuesRequest", instance: 7, refs: round.decided }, 3),
  encodeWire("g", "r1", { _tag: "Values", instance: 7, values: round.values }, 4)
]

it("decodes a hostile engine message into Invalid or a message that survives re-encoding", () => {
  const report = fuzzDecoder({
    name: "POPUC engine message (decodeWire)",
    decode: (bytes) => decodeWire("g", bytes),
    refused: (o) => (o as DecodedWire)?._tag === "Invalid",
    check: (decoded) => {
      if (decoded._tag !== "Ok") return "neither Ok nor Invalid"
      const again = decodeWire("g", encodeWire("g", decoded.from, decoded.msg, decoded.sentAtUs))
      return isDeepStrictEqual(again, decoded) ? undefined : "its encoding decodes to another message"
    },
    seeds,
    protobuf: true
  })
  expect(report.cases).toBe(fuzzRuns())
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)
