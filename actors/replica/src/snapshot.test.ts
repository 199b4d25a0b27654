import { clientValue, emptyDeliveredIndex, markDelivered } from "@reef/nic"
import { KvCommand } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { applyCommand, chainValue, emptyKvState, type HashChain } from "./kv-state.js"
import { deliveredFromWire, deliveredToWire, freezeSnapshot, installSnapshot } from "./snapshot.js"

/** Every process of these tests is in its first (and only) incarnation. */
const TEST_INCARNATION = "0000000000000001"

const toyHash: HashChain = (previous, bytes) => `${previous.length}:${bytes.length}:${previous.slice(-8)}`

const stateWith = (keys: number, valueBytes: number) => {
  const kv = emptyKvState()
  for (let i = 0; i < keys; i++) {
    const command = KvCommand.fromPartial({
      request: i,
      op: { $case: "set", value: { key: `k${i}`, value: Buffer.alloc(valueBytes, i % 256) } }
    })
    chainValue(kv, KvCommand.encode(command).finish(), toyHash)
    applyCommand(kv, command)
  }
  return kv
}

describe("state snapshots", () => {
  it("a frozen snapshot, moved in chunks, installs to the same state", () => {
    const kv = stateWith(1_000, 300)
    const index = markDelivered(emptyDeliveredIndex, clientValue("r1", TEST_INCARNATION, 0, new Uint8Array()))
    const frozen = freezeSnapshot(7, kv, 42, index, 16 * 1024)
    expect(frozen.chunks.length).toBeGreaterThan(10)
    for (const chunk of frozen.chunks) {
      expect(chunk.reduce((sum, e) => sum + e.key.length + e.value.length + 16, 0)).toBeLessThanOrEqual(16 * 1024)
    }
    const copy = stateWith(3, 10)
    installSnapshot(copy, frozen)
    expect(copy.stateHash).toBe(kv.stateHash)
    expect(copy.appliedCommands).toBe(kv.appliedCommands)
    expect([...copy.records.keys()].sort()).toEqual([...kv.records.keys()].sort())
    expect(copy.records.get("k5")).toEqual(kv.records.get("k5"))
  })

  it("the snapshot does not change when the live state does", () => {
    const kv = stateWith(10, 4)
    const frozen = freezeSnapshot(1, kv, 5, emptyDeliveredIndex)
    const command = KvCommand.fromPartial({ request: 99, op: { $case: "delete", value: { key: "k1" } } })
    chainValue(kv, KvCommand.encode(command).finish(), toyHash)
    applyCommand(kv, command)
    expect(frozen.chunks.flat().map((e) => e.key)).toContain("k1")
    expect(frozen.stateHash).not.toBe(kv.stateHash)
  })

  it("an empty state is one empty chunk", () => {
    expect(freezeSnapshot(1, emptyKvState(), 1, emptyDeliveredIndex).chunks).toEqual([[]])
  })

  it("the delivered index survives the wire", () => {
    let index = emptyDeliveredIndex
    for (const seq of [0, 1, 2, 5, 7]) {
      index = markDelivered(index, clientValue("r2", TEST_INCARNATION, seq, new Uint8Array()))
    }
    // A restarted r2 (a new incarnation) has a window of its own.
    index = markDelivered(index, clientValue("r2", "00000000000000b2", 0, new Uint8Array()))
    const back = deliveredFromWire(deliveredToWire(index))
    expect(back.get("r2")?.get(TEST_INCARNATION)).toEqual({ floor: 3, above: new Set([5, 7]) })
    expect(back.get("r2")?.get("00000000000000b2")).toEqual({ floor: 1, above: new Set() })
  })
})
