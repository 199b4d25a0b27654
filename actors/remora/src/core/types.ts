/**
 * Plain-data shapes of the Remora cores (coordinator and worker). The cores import nothing outside this folder:
 * no protobuf, no clock, no I/O, randomness only from an injected seed. What a transaction carries beyond its
 * keys and costs is an opaque `payload` the shells and the injected executor understand.
 */

export type Key = string
export type WorkerId = string

/**
 * One life of a worker: its id and the incarnation drawn when its process started. A worker restarted with the
 * same id is a new incarnation: what the old one held or was sent is not the new one's.
 */
export interface WorkerRef {
  readonly id: WorkerId
  readonly incarnation: string
}

/** Source of an input version that is the key's initial value: derived from the key, no transfer needed. */
export const GENESIS_SOURCE = "#genesis"
/** Source of an input version held by the coordinator (the owner of every object at first). */
export const COORDINATOR_SOURCE = "#coordinator"

/** Who holds an input version: a worker, the coordinator, or nobody yet (the initial value). */
export type Source = WorkerId | typeof GENESIS_SOURCE | typeof COORDINATOR_SOURCE

/** An admitted transaction as the cores see it. */
export interface TxMeta<P = unknown> {
  readonly id: string
  /** read_set ∪ write_set, sorted by code units, without duplicates. */
  readonly keys: ReadonlyArray<Key>
  /** A bit per key of `keys`: set for keys of the write set. */
  readonly writes: Uint8Array
  readonly statelessCostUs: number
  readonly statefulCostUs: number
  readonly payload: P
}

/** A block the coordinator proposed: its number among this coordinator's proposals, and its transactions. */
export interface ProposedBlock<P = unknown> {
  readonly proposal: number
  readonly digest: string
  readonly txs: ReadonlyArray<TxMeta<P>>
}

/** The result of one transition: the work the shell must do, as data. State is mutated in place (hot path). */
export interface Step<O> {
  readonly out: ReadonlyArray<O>
}

export type TxOutcome = "executed" | "invalid-signature" | "aborted"

export const isWriteAt = (writes: Uint8Array, index: number): boolean =>
  ((writes[index >> 3] ?? 0) & (1 << (index & 7))) !== 0
