/**
 * State transfer by snapshot, for a replica too far behind for the decision log (or whose missed decisions
 * would not fit one message): a peer freezes its KV state at an applied instance, with the total-order
 * broadcast's delivered index at the same point, and serves the entries in chunks bounded in bytes (a NATS
 * message has a size limit; a state does not). Pure: plain data in and out.
 */
import { type DeliveredIndex, deliveredIndexOf, deliveredWindows } from "@reef/nic"
import type { DeliveredWatermark, KvEntry } from "@reef/proto"
import type { KvRecord, KvStateData } from "./kv-state.js"

/** Well under NATS's default 1 MiB max_payload, with room for the envelope. */
export const DEFAULT_SNAPSHOT_CHUNK_BYTES = 256 * 1024
const ENTRY_OVERHEAD_BYTES = 16

export interface FrozenSnapshot {
  readonly id: number
  /** Every instance before this one is reflected in the entries. */
  readonly instance: number
  readonly stateHash: string
  readonly appliedCommands: number
  readonly delivered: DeliveredIndex
  readonly chunks: ReadonlyArray<ReadonlyArray<KvEntry>>
}

/**
 * Freezes `kv` (its records hold immutable values, so sharing them is safe) as it is after applying every
 * instance before `instance`. Keys in sorted order, so every replica chunks the same state the same way.
 */
export const freezeSnapshot = (
  id: number,
  kv: KvStateData,
  instance: number,
  delivered: DeliveredIndex,
  chunkBytes = DEFAULT_SNAPSHOT_CHUNK_BYTES
): FrozenSnapshot => {
  const chunks: Array<Array<KvEntry>> = []
  let chunk: Array<KvEntry> = []
  let bytes = 0
  for (const key of [...kv.records.keys()].sort()) {
    const record = kv.records.get(key)!
    const size = ENTRY_OVERHEAD_BYTES + Buffer.byteLength(key) + record.value.length
    if (chunk.length > 0 && bytes + size > chunkBytes) {
      chunks.push(chunk)
      chunk = []
      bytes = 0
    }
    // A Buffer view of the (immutable) value: no copy.
    const value = Buffer.from(record.value.buffer, record.value.byteOffset, record.value.length)
    chunk.push({ key, value, version: record.version })
    bytes += size
  }
  if (chunk.length > 0 || chunks.length === 0) chunks.push(chunk)
  return { id, instance, stateHash: kv.stateHash, appliedCommands: kv.appliedCommands, delivered, chunks }
}

/** Replaces `kv`'s contents with a snapshot's (the chunks in order). */
export const installSnapshot = (
  kv: KvStateData,
  snapshot: {
    readonly stateHash: string
    readonly appliedCommands: number
    readonly chunks: ReadonlyArray<ReadonlyArray<KvEntry>>
  }
): void => {
  kv.records.clear()
  for (const chunk of snapshot.chunks) {
    for (const entry of chunk) {
      const record: KvRecord = { value: new Uint8Array(entry.value), version: entry.version }
      kv.records.set(entry.key, record)
    }
  }
  kv.stateHash = snapshot.stateHash
  kv.appliedCommands = snapshot.appliedCommands
}

export const deliveredToWire = (index: DeliveredIndex): Array<DeliveredWatermark> =>
  deliveredWindows(index).map(({ proposer, incarnation, window }) => ({
    proposer,
    incarnation,
    floor: window.floor,
    above: [...window.above].sort((a, b) => a - b)
  }))

export const deliveredFromWire = (watermarks: ReadonlyArray<DeliveredWatermark>): DeliveredIndex =>
  deliveredIndexOf(
    watermarks.map((w) => ({
      proposer: w.proposer,
      incarnation: w.incarnation,
      window: { floor: w.floor, above: new Set(w.above) }
    }))
  )
