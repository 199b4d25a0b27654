import { describe, expect, it } from "vitest"
import type { RoundMsg, Value } from "./types.js"
import { clientValue, heartbeatValue, membershipValue, valueKey } from "./value.js"
import { compactRound, resolveRound, wholeRound } from "./value-refs.js"

const INC = "0000000000000001"
const a = clientValue("p1", INC, 0, new Uint8Array([1]))
const b = clientValue("p2", INC, 4, new Uint8Array([2, 2]))
const beat = heartbeatValue("p3", INC, 9)
const members = membershipValue("p1", INC, 1, ["p1", "p2", "p3"])

const round = (r: number, values: ReadonlyArray<Value>): RoundMsg => ({
  _tag: "Round",
  instance: 9,
  round: r,
  values,
  locked: ["p2"],
  decided: []
})

const store = (values: ReadonlyArray<Value>) => {
  const byKey = new Map(values.map((v) => [valueKey(v), v]))
  return (key: string) => byKey.get(key)
}

describe("values travel once (value-refs.ts)", () => {
  it("round 1 carries its proposal whole: it is where the bodies travel", () => {
    expect(compactRound(round(1, [a, beat]))).toEqual({ ...round(1, [a, beat]), refs: [] })
  })

  it("later rounds name client values and heartbeats by identity and carry membership commands whole", () => {
    const c = compactRound(round(2, [a, b, beat, members]))
    expect(c.values).toEqual([members])
    expect(c.refs).toEqual([
      { proposer: "p1", incarnation: INC, seq: 0, kind: "client" },
      { proposer: "p2", incarnation: INC, seq: 4, kind: "client" },
      { proposer: "p3", incarnation: INC, seq: 9, kind: "heartbeat" }
    ])
    expect(wholeRound(round(2, [a, b])).refs).toEqual([])
  })

  it("a receiver holding the bodies gets the very set the sender sent", () => {
    const sent = round(2, [a, b, beat, members])
    const resolved = resolveRound(compactRound(sent), store([a, b]))
    expect(resolved._tag).toBe("Resolved")
    const got = resolved._tag === "Resolved" ? resolved.msg : undefined
    expect(new Set(got?.values.map(valueKey))).toEqual(new Set(sent.values.map(valueKey)))
    expect(got?.values.find((v) => v.seq === 4)).toBe(b)
    expect(got?.values.find((v) => v.kind === "heartbeat")).toEqual(beat)
    expect({ ...got, values: [] }).toEqual({ ...sent, values: [] })
  })

  it("a reference to a body never received is never dropped: the message is not resolved at all", () => {
    // "V_j[r-1] ⊆ V_i[r]" (App. A, Observation A.3) holds only if a merged message is merged whole.
    const resolved = resolveRound(compactRound(round(2, [a, b, beat])), store([a]))
    expect(resolved).toEqual({ _tag: "Missing", refs: [{ proposer: "p2", incarnation: INC, seq: 4, kind: "client" }] })
  })

  it("a body of another kind under the same identity does not resolve a reference", () => {
    const impostor = { ...b, kind: "membership" as const }
    expect(resolveRound(compactRound(round(2, [b])), store([impostor]))._tag).toBe("Missing")
  })
})
