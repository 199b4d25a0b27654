import { createHash } from "node:crypto"
import { KvCommand } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { applyCommand, chainValue, emptyKvState, GENESIS_HASH, type HashChain } from "./kv-state.js"

const sha: HashChain = (previous, bytes) => createHash("sha256").update(previous).update(bytes).digest("hex")
const bytes = (s: string) => Buffer.from(s)
const run = (commands: ReadonlyArray<KvCommand>) => {
  const state = emptyKvState()
  const results = commands.map((c) => {
    chainValue(state, KvCommand.encode(c).finish(), sha)
    return applyCommand(state, c)
  })
  return { state, results }
}
const set = (key: string, value: string): KvCommand => ({
  request: 0,
  op: { $case: "set", value: { key, value: bytes(value) } }
})
const cas = (key: string, expected: string | null, value: string): KvCommand => ({
  request: 0,
  op: {
    $case: "compareAndSet",
    value: { key, expected: bytes(expected ?? ""), expectAbsent: expected === null, value: bytes(value) }
  }
})

describe("KV state machine", () => {
  it("applies set, delete and compare-and-set with versions", () => {
    const { state, results } = run([
      set("a", "1"),
      set("a", "2"),
      cas("a", "1", "x"),
      cas("a", "2", "3"),
      cas("b", null, "new"),
      { request: 0, op: { $case: "delete", value: { key: "a" } } },
      { request: 0, op: { $case: "delete", value: { key: "a" } } }
    ])
    expect(results.map((r) => r._tag)).toEqual([
      "Set",
      "Set",
      "CompareAndSet",
      "CompareAndSet",
      "CompareAndSet",
      "Delete",
      "Delete"
    ])
    expect(results[1]).toEqual({ _tag: "Set", version: 2 })
    expect(results[2]).toMatchObject({ swapped: false, current: new Uint8Array(bytes("2")) })
    expect(results[3]).toMatchObject({ swapped: true })
    expect(results[4]).toMatchObject({ swapped: true })
    expect(results[5]).toEqual({ _tag: "Delete", existed: true })
    expect(results[6]).toEqual({ _tag: "Delete", existed: false })
    expect(state.records.has("a")).toBe(false)
    expect(Buffer.from(state.records.get("b")!.value).toString()).toBe("new")
  })

  it("the same log gives the same hash; a different log a different one", () => {
    const log = [set("a", "1"), set("b", "2")]
    expect(run(log).state.stateHash).toBe(run(log).state.stateHash)
    expect(run(log).state.stateHash).not.toBe(run([...log].reverse()).state.stateHash)
    expect(run([]).state.stateHash).toBe(GENESIS_HASH)
  })
})
