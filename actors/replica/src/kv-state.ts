/**
 * The replicated key-value state machine: a pure function of the ordered command log. Every replica applies
 * the same decided commands in the same order and so holds the same state; the state hash (a chain over
 * every applied value, the encoded batch of commands a replica proposed) makes that checkable. No I/O: the
 * hash function is injected.
 */
import type { KvCommand } from "@reef/proto"
import { applyRedisWrite } from "./redis-commands.js"
import type { ReplicatedApp } from "./replicated-app.js"
import type { RespValue } from "./resp-value.js"

export interface KvRecord {
  readonly value: Uint8Array
  /** Number of writes to this key since it was (re)created. */
  readonly version: number
}

export interface KvStateData {
  readonly records: Map<string, KvRecord>
  /** Commands applied so far (including read barriers), and the hash chain over the values that carried them. */
  appliedCommands: number
  stateHash: string
}

export type KvResult =
  | { readonly _tag: "Set"; readonly version: number }
  | { readonly _tag: "Delete"; readonly existed: boolean }
  | {
      readonly _tag: "CompareAndSet"
      readonly swapped: boolean
      readonly current: Uint8Array | undefined
    }
  | { readonly _tag: "ReadBarrier" }
  | { readonly _tag: "Redis"; readonly reply: RespValue }
  /** A Redis write handed to the replicated app (replicated-app.ts): its reply comes when the app answers. */
  | { readonly _tag: "RedisApplied"; readonly reply: Promise<RespValue> }
  | { readonly _tag: "Invalid"; readonly reason: string }

/** (previous hash, encoded value) -> next hash; SHA-256 hex in the replica shell. */
export type HashChain = (previous: string, command: Uint8Array) => string

export const GENESIS_HASH = "0".repeat(64)

/**
 * The key and value bytes an operation carries (a Get's or a Delete's key; a Set's value; a CompareAndSet's
 * expected value too): what bounds on proposals and on session frames count.
 */
export const keyValueBytes = (op: {
  readonly key: string
  readonly value?: Uint8Array
  readonly expected?: Uint8Array
}): number => op.key.length + (op.value?.byteLength ?? 0) + (op.expected?.byteLength ?? 0)

export const emptyKvState = (): KvStateData => ({ records: new Map(), appliedCommands: 0, stateHash: GENESIS_HASH })

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i])

/** Chains one decided value (a KvBatch, as decided) into the state hash, before its commands are applied. */
export const chainValue = (state: KvStateData, encoded: Uint8Array, hash: HashChain): void => {
  state.stateHash = hash(state.stateHash, encoded)
}

/**
 * Applies one decided command (a Redis write to `app` when the replica replicates one). Mutates `state` in place (it is owned by one replica's apply loop; the
 * history lives in the log, not in old states) and returns the client-visible result.
 */
export const applyCommand = (state: KvStateData, command: KvCommand, app?: ReplicatedApp): KvResult => {
  state.appliedCommands++
  const op = command.op
  switch (op?.$case) {
    case "set": {
      const version = (state.records.get(op.value.key)?.version ?? 0) + 1
      state.records.set(op.value.key, { value: new Uint8Array(op.value.value), version })
      return { _tag: "Set", version }
    }
    case "delete":
      return { _tag: "Delete", existed: state.records.delete(op.value.key) }
    case "compareAndSet": {
      const { key, expected, expectAbsent, value } = op.value
      const current = state.records.get(key)
      const matches = expectAbsent ? current === undefined : current !== undefined && sameBytes(current.value, expected)
      if (!matches) return { _tag: "CompareAndSet", swapped: false, current: current?.value }
      state.records.set(key, { value: new Uint8Array(value), version: (current?.version ?? 0) + 1 })
      return { _tag: "CompareAndSet", swapped: true, current: undefined }
    }
    case "readBarrier":
      return { _tag: "ReadBarrier" }
    case "redis":
      return app === undefined
        ? { _tag: "Redis", reply: applyRedisWrite(state, op.value.args) }
        : { _tag: "RedisApplied", reply: app.apply(op.value.args) }
    case undefined:
      return { _tag: "Invalid", reason: "empty command" }
  }
}
