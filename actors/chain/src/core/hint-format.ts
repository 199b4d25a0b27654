/**
 * The hint's wire format (§4.1): a small versioned, fixed-width, big-endian binary. A hint lists the storage
 * keys a block touched, each annotated with its cheapest source, and the contracts whose code it loaded.
 *
 *   offset  size  field
 *        0     4  magic "IRAH"
 *        4     1  version (1)
 *        5     1  flags (0; reserved)
 *        6     2  reserved (0)
 *        8     8  block number
 *       16     4  storage entry count n
 *       20     4  code entry count m
 *       24  53·n  storage entries: address (20) ‖ slot (32) ‖ source (1: 0 plain, 1 zero, 2 change set)
 *  24+53·n  20·m  code entries: address (20)
 *
 * Pure (a core: no I/O, no runtime, no compression; hint/compression.ts wraps it in a zstd frame). Decoding
 * checks every field and throws a HintError naming what is wrong; nothing malformed gets through as a hint.
 */
import { ADDRESS_BYTES, type Address, KEY_BYTES, readU64OrInvalid, Source, type StorageKey, writeU64 } from "./bytes.js"
import { HintError } from "./hint-error.js"

export const HINT_MAGIC = "IRAH"
export const HINT_VERSION = 1
export const HINT_HEADER_BYTES = 24
export const STORAGE_ENTRY_BYTES = KEY_BYTES + 1
export const CODE_ENTRY_BYTES = ADDRESS_BYTES
/** Largest raw hint accepted (a decoder allocates no more than this): ~300k keys, far above any block. */
export const MAX_HINT_RAW_BYTES = 16 * 2 ** 20

export interface Hint {
  readonly block: number
  /** Storage keys in first-access order (latin1 strings of 52 bytes). */
  readonly storage: ReadonlyArray<StorageKey>
  /** Source annotation of each storage key (parallel to `storage`). */
  readonly sources: Uint8Array
  /** Addresses of the contracts whose code the block loaded. */
  readonly code: ReadonlyArray<Address>
}

export const rawHintBytes = (storageEntries: number, codeEntries: number): number =>
  HINT_HEADER_BYTES + storageEntries * STORAGE_ENTRY_BYTES + codeEntries * CODE_ENTRY_BYTES

/** Encodes a hint; keys must be 52-byte and addresses 20-byte latin1 strings (the recorder's). */
export const encodeHint = (hint: Hint): Buffer => {
  const n = hint.storage.length
  const m = hint.code.length
  if (hint.sources.length !== n) throw new RangeError(`${n} keys but ${hint.sources.length} sources`)
  const bytes = Buffer.allocUnsafe(rawHintBytes(n, m))
  bytes.write(HINT_MAGIC, 0, 4, "latin1")
  bytes[4] = HINT_VERSION
  bytes[5] = 0
  bytes.writeUInt16BE(0, 6)
  writeU64(bytes, 8, hint.block)
  bytes.writeUInt32BE(n, 16)
  bytes.writeUInt32BE(m, 20)
  let offset = HINT_HEADER_BYTES
  for (let i = 0; i < n; i++) {
    bytes.write(hint.storage[i]!, offset, KEY_BYTES, "latin1")
    bytes[offset + KEY_BYTES] = hint.sources[i]!
    offset += STORAGE_ENTRY_BYTES
  }
  for (let i = 0; i < m; i++) {
    bytes.write(hint.code[i]!, offset, ADDRESS_BYTES, "latin1")
    offset += CODE_ENTRY_BYTES
  }
  return bytes
}

/** Decodes a raw hint, checking magic, version, reserved fields, lengths, sources and duplicates. */
export const decodeHint = (bytes: Uint8Array): Hint => {
  if (bytes.length < HINT_HEADER_BYTES) {
    throw new HintError({ reason: "truncated", detail: `${bytes.length} bytes, header needs ${HINT_HEADER_BYTES}` })
  }
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  if (view.toString("latin1", 0, 4) !== HINT_MAGIC) {
    throw new HintError({ reason: "bad-magic", detail: `starts with ${view.toString("hex", 0, 4)}` })
  }
  if (view[4] !== HINT_VERSION) throw new HintError({ reason: "version", detail: `version ${view[4]}` })
  if (view[5] !== 0 || view.readUInt16BE(6) !== 0) {
    throw new HintError({ reason: "reserved", detail: "reserved header bytes are not zero" })
  }
  const block = readU64OrInvalid(view, 8)
  if (block < 0) throw new HintError({ reason: "block", detail: "block number above 2^53" })
  const n = view.readUInt32BE(16)
  const m = view.readUInt32BE(20)
  const expected = rawHintBytes(n, m)
  if (expected > MAX_HINT_RAW_BYTES) throw new HintError({ reason: "too-large", detail: `${n} keys, ${m} contracts` })
  if (bytes.length < expected) {
    throw new HintError({ reason: "truncated", detail: `${bytes.length} bytes for ${n} keys and ${m} contracts` })
  }
  if (bytes.length > expected) {
    throw new HintError({ reason: "trailing", detail: `${bytes.length - expected} bytes after the last entry` })
  }
  const storage: Array<StorageKey> = new Array(n)
  const sources = new Uint8Array(n)
  const seen = new Set<StorageKey>()
  let offset = HINT_HEADER_BYTES
  for (let i = 0; i < n; i++) {
    const key = view.toString("latin1", offset, offset + KEY_BYTES)
    const source = view[offset + KEY_BYTES]!
    if (source > Source.Changeset) throw new HintError({ reason: "source", detail: `entry ${i} has source ${source}` })
    if (seen.has(key)) throw new HintError({ reason: "duplicate", detail: `storage entry ${i} repeats a key` })
    seen.add(key)
    storage[i] = key
    sources[i] = source
    offset += STORAGE_ENTRY_BYTES
  }
  const code: Array<Address> = new Array(m)
  const seenCode = new Set<Address>()
  for (let i = 0; i < m; i++) {
    const address = view.toString("latin1", offset, offset + ADDRESS_BYTES)
    if (seenCode.has(address))
      throw new HintError({ reason: "duplicate", detail: `code entry ${i} repeats an address` })
    seenCode.add(address)
    code[i] = address
    offset += CODE_ENTRY_BYTES
  }
  return { block, storage, sources, code }
}
