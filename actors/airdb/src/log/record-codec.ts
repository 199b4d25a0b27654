/**
 * How AirDB's records are stored: [format byte][u32 CRC32 of the payload][protobuf payload]. A record that
 * fails the check or does not decode is corruption, reported with where it is (CorruptRecord), never
 * applied: replaying a wrong entry would make this client diverge from every other.
 */
import { crc32 } from "node:zlib"
import { type Codec, decodeWhole } from "@reef/kernel"
import {
  AirDbCommandEntry,
  AirDbSegmentAdded,
  AirDbSnapshotBlock,
  type AirDbSnapshotChain,
  AirDbSnapshotIndexPart,
  type AirDbSnapshotRef,
  AirDbStateRecord
} from "@reef/proto"
import * as Data from "effect/Data"
import type { BlockRef } from "../core/blocks.js"
import type { Chain, LogLocation, SnapshotRef } from "../core/chain.js"
import type { StateRecord, StoreConfig } from "../core/coordination.js"
import type { CommandEntry, Intention, Key, KeyState } from "../core/types.js"

export const RECORD_FORMAT = 1
const HEADER_BYTES = 5

export class CorruptRecord extends Data.TaggedError("CorruptRecord")<{
  readonly segment: string
  readonly position: number
  readonly reason: string
}> {
  override get message() {
    return `corrupt record in segment ${this.segment} at ${this.position}: ${this.reason}`
  }
}

interface Message<T> extends Pick<Codec<T>, "decode"> {
  encode(message: T): { finish(): Uint8Array }
}

const seal = <T>(codec: Message<T>, message: T): Uint8Array => {
  const payload = codec.encode(message).finish()
  const out = new Uint8Array(HEADER_BYTES + payload.byteLength)
  out[0] = RECORD_FORMAT
  new DataView(out.buffer).setUint32(1, crc32(payload))
  out.set(payload, HEADER_BYTES)
  return out
}

const open = <T>(codec: Message<T>, bytes: Uint8Array, segment: string, position: number): T | CorruptRecord => {
  const corrupt = (reason: string) => new CorruptRecord({ segment, position, reason })
  if (bytes.byteLength < HEADER_BYTES) return corrupt(`${bytes.byteLength} bytes is shorter than a record header`)
  if (bytes[0] !== RECORD_FORMAT) return corrupt(`unknown record format ${bytes[0]}`)
  const payload = bytes.subarray(HEADER_BYTES)
  const expected = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1)
  if (crc32(payload) !== expected) return corrupt("checksum mismatch")
  try {
    return decodeWhole(codec, payload)
  } catch (cause) {
    return corrupt(`undecodable payload: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

// ---- command entries ---------------------------------------------------------------------------------------

export const encodeCommandEntry = (entry: CommandEntry): Uint8Array =>
  seal(AirDbCommandEntry, {
    index: entry.index,
    writer: entry.writer,
    batch: entry.batch,
    intentions: entry.intentions.map((t) => ({
      snapshotEntries: t.snapshotEntries,
      checked: [...t.checked],
      tx: t.tx,
      writes: t.writes.map((w) => ({
        key: w.key,
        value: w.value ?? new Uint8Array(0),
        deleted: w.value === undefined
      }))
    }))
  })

export const decodeCommandEntry = (
  bytes: Uint8Array,
  segment: string,
  position: number
): CommandEntry | CorruptRecord => {
  const m = open(AirDbCommandEntry, bytes, segment, position)
  if (m instanceof CorruptRecord) return m
  return {
    index: m.index,
    writer: m.writer,
    batch: m.batch,
    intentions: m.intentions.map(
      (t): Intention => ({
        snapshotEntries: t.snapshotEntries,
        checked: t.checked,
        tx: t.tx,
        writes: t.writes.map((w) => ({ key: w.key, value: w.deleted ? undefined : w.value }))
      })
    )
  }
}

/** Bytes an intention adds to an entry (an upper bound of its encoded size). */
export const intentionBytes = (t: Intention): number => {
  let n = 24
  for (const k of t.checked) n += k.length * 3 + 4
  for (const w of t.writes) n += w.key.length * 3 + (w.value?.byteLength ?? 0) + 12
  return n
}

/** Bytes of an entry's record besides its intentions (header, writer, index). */
export const ENTRY_OVERHEAD_BYTES = 128

// ---- meta segments -----------------------------------------------------------------------------------------

export interface SegmentAdded {
  readonly ordinal: number
  readonly segment: string
  readonly firstIndex: number
}

export const encodeSegmentAdded = (s: SegmentAdded): Uint8Array => seal(AirDbSegmentAdded, s)

export const decodeSegmentAdded = (
  bytes: Uint8Array,
  segment: string,
  position: number
): SegmentAdded | CorruptRecord => open(AirDbSegmentAdded, bytes, segment, position)

// ---- state records -----------------------------------------------------------------------------------------

const refToWire = (s: SnapshotRef): AirDbSnapshotRef => ({ ...s })
const chainToWire = (chain: Chain, owner: string): AirDbSnapshotChain => ({
  snapshots: chain.snapshots.map(refToWire),
  resume: { ...chain.replayFrom },
  owner
})
const locationFromWire = (l: { ordinal: number; position: number; index: number } | undefined): LogLocation => ({
  ordinal: l?.ordinal ?? 0,
  position: l?.position ?? 0,
  index: l?.index ?? 0
})

export const encodeStateRecord = (record: StateRecord): Uint8Array => {
  switch (record._tag) {
    case "Config": {
      const c = record.config
      return seal(AirDbStateRecord, {
        index: record.index,
        record: {
          $case: "config",
          value: {
            formatVersion: c.formatVersion,
            conflictWindow: c.conflictWindow,
            snapshotEvery: c.timely.snapshotEvery,
            epsilon: c.timely.epsilon,
            snapshotTtlMs: c.snapshotTtlMs,
            commandSegmentRecords: c.layout.commandSegmentRecords,
            stateSegmentRecords: c.layout.stateSegmentRecords,
            metaSegmentRecords: c.layout.metaSegmentRecords
          }
        }
      })
    }
    case "Begin":
      return seal(AirDbStateRecord, { index: record.index, record: { $case: "begin", value: { ...record.begin } } })
    case "Chain":
      return seal(AirDbStateRecord, {
        index: record.index,
        record: { $case: "chain", value: chainToWire(record.chain, record.owner) }
      })
  }
}

export const decodeStateRecord = (
  bytes: Uint8Array,
  segment: string,
  position: number
): StateRecord | CorruptRecord => {
  const m = open(AirDbStateRecord, bytes, segment, position)
  if (m instanceof CorruptRecord) return m
  const r = m.record
  switch (r?.$case) {
    case "config": {
      const c = r.value
      const config: StoreConfig = {
        formatVersion: c.formatVersion,
        conflictWindow: c.conflictWindow,
        timely: { snapshotEvery: c.snapshotEvery, epsilon: c.epsilon },
        snapshotTtlMs: c.snapshotTtlMs,
        layout: {
          commandSegmentRecords: c.commandSegmentRecords,
          stateSegmentRecords: c.stateSegmentRecords,
          metaSegmentRecords: c.metaSegmentRecords
        }
      }
      return { _tag: "Config", index: m.index, config }
    }
    case "begin":
      return { _tag: "Begin", index: m.index, begin: { ...r.value } }
    case "chain":
      return {
        _tag: "Chain",
        index: m.index,
        owner: r.value.owner,
        chain: { snapshots: r.value.snapshots.map((s) => ({ ...s })), replayFrom: locationFromWire(r.value.resume) }
      }
    default:
      return new CorruptRecord({ segment, position, reason: "state record without a body" })
  }
}

// ---- snapshot blocks and indexes ---------------------------------------------------------------------------

export const encodeBlock = (entries: ReadonlyArray<readonly [Key, KeyState]>): Uint8Array =>
  seal(AirDbSnapshotBlock, {
    keys: entries.map(([key, s]) => ({
      key,
      value: s.value ?? new Uint8Array(0),
      deleted: s.value === undefined,
      modified: s.modified
    }))
  })

export const decodeBlock = (
  bytes: Uint8Array,
  segment: string,
  position: number
): Array<readonly [Key, KeyState]> | CorruptRecord => {
  const m = open(AirDbSnapshotBlock, bytes, segment, position)
  if (m instanceof CorruptRecord) return m
  return m.keys.map((k) => [k.key, { value: k.deleted ? undefined : k.value, modified: k.modified }] as const)
}

export const encodeIndexPart = (blocks: ReadonlyArray<BlockRef>, last: boolean): Uint8Array =>
  seal(AirDbSnapshotIndexPart, { blocks: blocks.map((b) => ({ ...b })), last })

export const decodeIndexPart = (
  bytes: Uint8Array,
  segment: string,
  position: number
): { readonly blocks: ReadonlyArray<BlockRef>; readonly last: boolean } | CorruptRecord =>
  open(AirDbSnapshotIndexPart, bytes, segment, position)
