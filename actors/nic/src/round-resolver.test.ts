import { describe, expect, it } from "vitest"
import { clientValue, type ProcessId, type RoundMsg, type Value, type ValueRef, valueKey } from "./core/index.js"
import { compactRound } from "./core/value-refs.js"
import { RoundResolver } from "./round-resolver.js"

const INC = "0000000000000001"
const v1 = clientValue("r1", INC, 0, new Uint8Array([1]))
const v2 = clientValue("r2", INC, 0, new Uint8Array([2]))
const v3 = clientValue("r3", INC, 0, new Uint8Array([3]))

const round = (instance: number, r: number, values: ReadonlyArray<Value>): RoundMsg => ({
  _tag: "Round",
  instance,
  round: r,
  values,
  locked: [],
  decided: []
})

const setup = (known: (key: string) => Value | undefined = () => undefined) => {
  const delivered: Array<{ from: ProcessId; msg: RoundMsg }> = []
  const requests: Array<{ to: ProcessId; instance: number; refs: ReadonlyArray<ValueRef> }> = []
  const resolver = new RoundResolver({
    request: (to, instance, refs) => requests.push({ to, instance, refs }),
    deliver: (from, msg) => delivered.push({ from, msg }),
    known
  })
  return { resolver, delivered, requests }
}

describe("RoundResolver", () => {
  it("passes on a round-2 message whose bodies came in round 1", () => {
    const { resolver, delivered, requests } = setup()
    resolver.onRound("r1", compactRound(round(1, 1, [v1])))
    resolver.onRound("r2", compactRound(round(1, 1, [v2])))
    resolver.onRound("r2", compactRound(round(1, 2, [v1, v2])))
    expect(delivered.map((d) => d.msg.values.map(valueKey))).toEqual([
      [valueKey(v1)],
      [valueKey(v2)],
      [valueKey(v1), valueKey(v2)]
    ])
    expect(requests).toEqual([])
  })

  it("holds a message naming a body it never got, asks that message's sender, and passes it on once answered", () => {
    // r3's round-1 message never reached this engine (an omission); r1 and r2 relay its value by reference.
    const { resolver, delivered, requests } = setup()
    resolver.onRound("r1", compactRound(round(1, 1, [v1])))
    resolver.onRound("r2", compactRound(round(1, 1, [v2])))
    resolver.onRound("r1", compactRound(round(1, 2, [v1, v2, v3])))
    resolver.onRound("r2", compactRound(round(1, 2, [v1, v2, v3])))
    expect(delivered).toHaveLength(2)
    expect(resolver.heldCount()).toBe(2)
    // Each sender asked once: a crashed one cannot leave the other's message waiting.
    const ref = { proposer: "r3", incarnation: INC, seq: 0, kind: "client" }
    expect(requests).toEqual([
      { to: "r1", instance: 1, refs: [ref] },
      { to: "r2", instance: 1, refs: [ref] }
    ])
    expect(resolver.answer([ref as ValueRef])).toEqual([])
    resolver.onValues(1, [v3])
    expect(resolver.heldCount()).toBe(0)
    expect(delivered.slice(2).map((d) => [d.from, d.msg.values.length])).toEqual([
      ["r1", 3],
      ["r2", 3]
    ])
    // Asking again for one value from one sender is pointless: the first answer was the one.
    resolver.onRound("r1", compactRound(round(1, 3, [v1, v2, v3, clientValue("r3", INC, 1, new Uint8Array())])))
    expect(requests).toHaveLength(3)
    expect(requests[2]!.refs.map((r) => r.seq)).toEqual([1])
  })

  it("passes on a held message once the proposer's own round-1 message arrives after it (reordered)", () => {
    const { resolver, delivered } = setup()
    resolver.onRound("r1", compactRound(round(1, 2, [v1, v3])))
    expect(resolver.heldCount()).toBe(1)
    resolver.onRound("r3", compactRound(round(1, 1, [v3])))
    expect(resolver.heldCount()).toBe(1)
    resolver.onRound("r4", compactRound(round(1, 1, [v1])))
    expect(resolver.heldCount()).toBe(0)
    expect(delivered.map((d) => [d.from, d.msg.round])).toEqual([
      ["r3", 1],
      ["r4", 1],
      ["r1", 2]
    ])
  })

  it("answers from the core's current set too, and not with what it does not hold", () => {
    const { resolver } = setup((key) => (key === valueKey(v2) ? v2 : undefined))
    resolver.remember(4, [v1])
    const refs = [v1, v2, v3].map(({ proposer, incarnation, seq, kind }) => ({ proposer, incarnation, seq, kind }))
    expect(resolver.answer(refs)).toEqual([v1, v2])
  })

  it("forgets bodies and drops held messages of instances left behind", () => {
    const { resolver, delivered } = setup()
    const ref1 = { proposer: "r1", incarnation: INC, seq: 0, kind: "client" } as const
    resolver.remember(1, [v1])
    resolver.onRound("r1", compactRound(round(1, 2, [v1, v2])))
    expect(resolver.heldCount()).toBe(1)
    // A peer is in instance 3: a message of 1 still waiting would come too late for the core anyway.
    resolver.onRound("r1", compactRound(round(3, 1, [v3])))
    expect(resolver.heldCount()).toBe(0)
    expect(resolver.dropped).toBe(1)
    expect(resolver.answer([ref1])).toEqual([v1])
    resolver.onRound("r2", compactRound(round(4, 1, [v2])))
    expect(resolver.answer([ref1])).toEqual([])
    // A body seen again in a later instance is kept with it.
    resolver.remember(4, [v1])
    resolver.onRound("r2", compactRound(round(6, 1, [v2])))
    expect(resolver.answer([ref1])).toEqual([v1])
    expect(delivered.map((d) => d.msg.instance)).toEqual([3, 4, 6])
  })
})
