import { VALUE_OVERHEAD_BYTES } from "@reef/nic"
import { describe, expect, it } from "vitest"
import { DecisionLog } from "./decision-log.js"

const v = (seq: number, payload = new Uint8Array()) => ({
  proposer: "r1",
  incarnation: "00000000000000a1",
  seq,
  kind: "client" as const,
  payload,
  members: []
})

describe("decision log", () => {
  it("returns the decisions since an instance, empty when nothing is newer", () => {
    const log = new DecisionLog({ maxInstances: 10 })
    for (let i = 1; i <= 5; i++) log.append(i, [v(i)])
    expect(log.since(4)?.map((d) => d.instance)).toEqual([4, 5])
    expect(log.since(6)).toEqual([])
  })

  it("forgets instances beyond its window and says so", () => {
    const log = new DecisionLog({ maxInstances: 3 })
    for (let i = 1; i <= 5; i++) log.append(i, [])
    expect(log.since(3)?.map((d) => d.instance)).toEqual([3, 4, 5])
    expect(log.since(2)).toBeUndefined()
  })

  it("is bounded in bytes: memory stays flat under sustained load", () => {
    const perInstance = 10 * (VALUE_OVERHEAD_BYTES + 100)
    const log = new DecisionLog({ maxBytes: 5 * perInstance })
    for (let i = 1; i <= 1_000; i++) {
      log.append(
        i,
        Array.from({ length: 10 }, (_, k) => v(i * 10 + k, new Uint8Array(100)))
      )
    }
    expect(log.heldBytes).toBeLessThanOrEqual(5 * perInstance)
    expect(log.since(996)?.map((d) => d.instance)).toEqual([996, 997, 998, 999, 1000])
    expect(log.since(995)).toBeUndefined()
    // More than one reply's worth: the asker needs a snapshot.
    expect(log.since(996, 2 * perInstance)).toBeUndefined()
    expect(log.since(999, 2 * perInstance)?.length).toBe(2)
    // What does not fit one reply comes in parts: the first ones that fit, then the rest when asked again.
    expect(log.prefix(996, 2 * perInstance)?.map((d) => d.instance)).toEqual([996, 997])
    expect(log.prefix(999, 2 * perInstance)?.map((d) => d.instance)).toEqual([999, 1000])
    expect(log.prefix(996, 1)?.map((d) => d.instance)).toEqual([996])
    expect(log.prefix(995, 2 * perInstance)).toBeUndefined()
  })

  it("keeps a copy of each payload, not the message buffer it is a view into", () => {
    const message = new Uint8Array(64 * 1024)
    const log = new DecisionLog()
    log.append(1, [v(1, message.subarray(10, 20))])
    const kept = log.since(1)![0]!.values[0]!.payload
    expect(kept.length).toBe(10)
    expect(kept.buffer.byteLength).toBe(10)
  })

  it("after a reset (state from a snapshot) it holds nothing older than the snapshot", () => {
    const log = new DecisionLog()
    for (let i = 1; i <= 5; i++) log.append(i, [])
    log.reset(40)
    expect(log.lastInstance).toBe(39)
    expect(log.since(40)).toEqual([])
    expect(log.since(5)).toBeUndefined()
    log.append(40, [v(1)])
    expect(log.since(40)?.map((d) => d.instance)).toEqual([40])
  })
})
