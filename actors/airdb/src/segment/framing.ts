/**
 * Records in a byte stream (an append blob): each record is framed as [u32 length][u32 crc32][bytes], so
 * a reader starting at any record's position finds where it ends and whether it is intact.
 */
import { crc32 } from "node:zlib"

export const FRAME_HEADER_BYTES = 8

export const frameRecord = (bytes: Uint8Array): Buffer => {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + bytes.byteLength)
  frame.writeUInt32BE(bytes.byteLength, 0)
  frame.writeUInt32BE(crc32(bytes), 4)
  frame.set(bytes, FRAME_HEADER_BYTES)
  return frame
}

export type Unframed =
  | {
      readonly _tag: "Records"
      readonly records: ReadonlyArray<{ readonly position: number; readonly next: number; readonly bytes: Uint8Array }>
      /** When not even one record was whole: the bytes from the chunk's start that its first record needs. */
      readonly firstRecordBytes: number | undefined
    }
  | { readonly _tag: "Corrupt"; readonly position: number; readonly reason: string }

/**
 * The whole records in `chunk`, which starts at stream position `base`, at most `maxRecords`. A record cut
 * off by the chunk's end is left for the next read; a record whose checksum fails is corruption.
 */
export const unframeRecords = (
  chunk: Uint8Array,
  base: number,
  maxRecords: number,
  maxRecordBytes: number
): Unframed => {
  const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  const records = []
  let at = 0
  while (records.length < maxRecords && at < view.byteLength) {
    if (at + FRAME_HEADER_BYTES > view.byteLength) break
    const length = view.readUInt32BE(at)
    if (length > maxRecordBytes) {
      return { _tag: "Corrupt", position: base + at, reason: `frame length ${length} exceeds ${maxRecordBytes}` }
    }
    const end = at + FRAME_HEADER_BYTES + length
    if (end > view.byteLength) break
    const bytes = view.subarray(at + FRAME_HEADER_BYTES, end)
    if (crc32(bytes) !== view.readUInt32BE(at + 4)) {
      return { _tag: "Corrupt", position: base + at, reason: "checksum mismatch" }
    }
    // Copied out: the chunk may be large and the caller keeps records.
    records.push({ position: base + at, next: base + end, bytes: Uint8Array.from(bytes) })
    at = end
  }
  const firstRecordBytes =
    records.length > 0 || view.byteLength === 0
      ? undefined
      : view.byteLength < FRAME_HEADER_BYTES
        ? FRAME_HEADER_BYTES
        : FRAME_HEADER_BYTES + view.readUInt32BE(0)
  return { _tag: "Records", records, firstRecordBytes }
}
