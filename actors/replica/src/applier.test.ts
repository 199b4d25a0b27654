/**
 * Applying decided batches: "a decided command or barrier is 'own' only if proposer, incarnation and request
 * id all match" (issue 11). A restarted replica re-applies its previous process's commands (a state transfer
 * replays them) under the same id and from request 1 again: none of them may answer its new callers.
 */
import { type AppliedBatch, clientValue, membershipValue, type Value } from "@reef/nic"
import { KvBatch, type KvCommand } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { applyBatch, type OwnResults } from "./applier.js"
import type { HashChain, KvResult } from "./kv-state.js"
import { createReplicaState } from "./replica-state.js"

const toyHash: HashChain = (previous, bytes) => `${previous.length}:${bytes.length}`
const NOW = "00000000000000b2"
const BEFORE = "00000000000000a1"

const set = (request: number, key: string, value: string): KvCommand => ({
  request,
  op: { $case: "set", value: { key, value: Buffer.from(value) } }
})
const batchValue = (proposer: string, incarnation: string, seq: number, commands: ReadonlyArray<KvCommand>): Value =>
  clientValue(proposer, incarnation, seq, KvBatch.encode({ commands: [...commands] }).finish())

const batch = (instance: number, values: ReadonlyArray<Value>): AppliedBatch => ({
  engine: 0,
  instance,
  rounds: 2,
  decidedSetSize: values.length,
  suspects: [],
  values,
  elapsedMs: 1,
  roundStartsAgoMs: []
})

/** Records which own results reach the proposer. */
const recorder = () => {
  const commands: Array<{ request: number; result: KvResult; instance: number }> = []
  const memberships: Array<{ seq: number; instance: number }> = []
  const own: OwnResults<undefined> = {
    command: (command, result, instance) => commands.push({ request: command.request, result, instance }),
    membership: (ref, instance) => memberships.push({ seq: ref.seq, instance })
  }
  return { own, commands, memberships }
}

describe("applying decided batches", () => {
  it("answers only this incarnation's commands, not its previous process's nor its peers'", () => {
    const state = createReplicaState({ id: "r3", group: "kv", members: ["r1", "r2", "r3"], incarnation: NOW })
    const { own, commands } = recorder()
    applyBatch(
      state,
      batch(6, [
        // r3's previous process: request 1, the very number the new process's first call gets.
        batchValue("r3", BEFORE, 0, [set(1, "x", "old-0")]),
        batchValue("r1", "00000000000000c3", 0, [set(1, "y", "from-r1")])
      ]),
      toyHash,
      own,
      undefined
    )
    expect(commands).toEqual([])
    applyBatch(state, batch(7, [batchValue("r3", NOW, 0, [set(1, "x", "new-0")])]), toyHash, own, undefined)
    expect(commands).toEqual([{ request: 1, result: { _tag: "Set", version: 2 }, instance: 7 }])
    // Every value was applied to the state, whoever proposed it.
    expect(Buffer.from(state.kv.records.get("x")!.value).toString()).toBe("new-0")
    expect(state.kv.records.get("y")).toBeDefined()
    expect(state.appliedInstance).toBe(7)
  })

  it("matches membership changes by incarnation too, and reports that the members changed", () => {
    const state = createReplicaState({ id: "r1", group: "kv", members: ["r1", "r2", "r3"], incarnation: NOW })
    const { own, memberships } = recorder()
    const previous = applyBatch(
      state,
      batch(3, [membershipValue("r1", BEFORE, 4, ["r1", "r2", "r3", "r4", "r5"])]),
      toyHash,
      own,
      undefined
    )
    expect(previous.membersChanged).toBe(true)
    expect(memberships).toEqual([])
    applyBatch(state, batch(4, [membershipValue("r1", NOW, 4, ["r1", "r2", "r3"])]), toyHash, own, undefined)
    expect(memberships).toEqual([{ seq: 4, instance: 4 }])
    expect(state.members).toEqual(["r1", "r2", "r3"])
  })

  it("skips a decided value that is not a KvBatch (identically everywhere) and keeps the log and index", () => {
    const state = createReplicaState({ id: "r1", group: "kv", members: ["r1"], incarnation: NOW })
    const garbage = clientValue("r2", BEFORE, 0, new Uint8Array([0xff, 0xff, 0xff]))
    const { own } = recorder()
    const applied = applyBatch(state, batch(1, [garbage]), toyHash, own, undefined)
    expect(applied.skipped).toHaveLength(1)
    expect(state.kv.appliedCommands).toBe(0)
    expect(state.decisions.lastInstance).toBe(1)
    expect(state.delivered.get("r2")?.get(BEFORE)).toEqual({ floor: 1, above: new Set() })
  })
})
