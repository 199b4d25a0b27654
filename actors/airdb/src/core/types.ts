/**
 * The plain data of AirDB's S2MR model (§3.2, §4.1-4.2). The command log L = ⟨σ1 ... σn⟩ is a list of
 * entries; entry i (0-based) holds a batch of transaction intentions. A timestamp names one intention:
 * its entry's index and its slot in the entry, packed in one number so it orders like the log.
 */

export type Key = string

/** A commit timestamp: entry index * SLOTS_PER_ENTRY + slot. */
export type Ts = number

/** Intentions one entry may hold (the slot is the low 16 bits of a timestamp). */
export const SLOTS_PER_ENTRY = 65_536

export const commitTs = (entry: number, slot: number): Ts => entry * SLOTS_PER_ENTRY + slot

export const entryOf = (ts: Ts): number => Math.floor(ts / SLOTS_PER_ENTRY)

/** A key's state in a partial state: its value (undefined: deleted) and its last-modified timestamp. */
export interface KeyState {
  readonly value: Uint8Array | undefined
  readonly modified: Ts
}

export interface Write {
  readonly key: Key
  /** undefined deletes the key. */
  readonly value: Uint8Array | undefined
}

/**
 * Strict serializability checks the read set, snapshot isolation the write set (§4.1). The writer chooses:
 * an intention carries the keys to check, so every client reaches the same outcome.
 */
export type Isolation = "serializable" | "snapshot"

export interface Intention {
  /** s(T): command-log entries the transaction's snapshot had seen (it read the state after them). */
  readonly snapshotEntries: number
  /** Keys whose modification at or after s(T) aborts the transaction. */
  readonly checked: ReadonlyArray<Key>
  readonly writes: ReadonlyArray<Write>
  /** Unique within the writer's incarnation. */
  readonly tx: number
}

export interface CommandEntry {
  readonly index: number
  readonly writer: string
  readonly batch: number
  readonly intentions: ReadonlyArray<Intention>
}

export type AbortReason = "conflict" | "snapshot-too-old" | "invalid-snapshot"

export type Outcome =
  | { readonly _tag: "Committed"; readonly ts: Ts }
  | { readonly _tag: "Aborted"; readonly ts: Ts; readonly reason: AbortReason; readonly key?: Key }

/** The keys an intention checks under an isolation level (§4.1). */
export const checkedKeys = (
  isolation: Isolation,
  reads: Iterable<Key>,
  writes: ReadonlyArray<Write>
): ReadonlyArray<Key> => (isolation === "serializable" ? [...new Set(reads)] : [...new Set(writes.map((w) => w.key))])
