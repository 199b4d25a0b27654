/**
 * A hint on the wire: its raw format (format.ts) in one zstd frame with a content checksum, so corruption
 * anywhere is detected when it is decompressed (§4.3: Zstandard's integrity check). Decompression checks
 * the frame's declared size against MAX_HINT_RAW_BYTES before allocating and writes into a buffer of that
 * size, so a hostile frame cannot make a backup allocate more.
 */
import { Compressor } from "zstd-napi"
import zstd from "zstd-napi/binding.js"
import { HintError } from "./errors.js"
import { decodeHint, encodeHint, type Hint, MAX_HINT_RAW_BYTES } from "./format.js"

/** zstd's default level: ~200 MB/s here, a fraction of a millisecond for a median hint. */
const COMPRESSION_LEVEL = 3

let compressor: Compressor | undefined
const sharedCompressor = (): Compressor => {
  if (compressor === undefined) {
    compressor = new Compressor()
    compressor.setParameters({ compressionLevel: COMPRESSION_LEVEL, checksumFlag: true, contentSizeFlag: true })
  }
  return compressor
}

export const compressHint = (raw: Uint8Array): Buffer => sharedCompressor().compress(raw)

/** Decompresses one zstd frame into a raw hint, refusing anything but exactly one valid, bounded frame. */
export const decompressHint = (frame: Uint8Array): Buffer => {
  let declared: number | null
  let frameBytes: number
  try {
    declared = zstd.getFrameContentSize(frame)
    frameBytes = zstd.findFrameCompressedSize(frame)
  } catch (cause) {
    throw new HintError({ reason: "decompress", detail: `not a zstd frame: ${(cause as Error).message}` })
  }
  if (declared === null) throw new HintError({ reason: "decompress", detail: "frame does not declare its size" })
  if (declared > MAX_HINT_RAW_BYTES)
    throw new HintError({ reason: "too-large", detail: `frame declares ${declared} bytes` })
  if (frameBytes !== frame.length) {
    throw new HintError({ reason: "trailing", detail: `${frame.length - frameBytes} bytes after the zstd frame` })
  }
  const raw = Buffer.allocUnsafe(declared)
  let written: number
  try {
    written = zstd.decompress(raw, frame)
  } catch (cause) {
    throw new HintError({ reason: "decompress", detail: (cause as Error).message })
  }
  if (written !== declared) throw new HintError({ reason: "decompress", detail: `${written} of ${declared} bytes` })
  return raw
}

/** A hint ready to send: encoded and compressed. */
export const serializeHint = (hint: Hint): Buffer => compressHint(encodeHint(hint))

/**
 * The hint for block `block` from its wire bytes: decompressed, decoded, and checked to be for that block.
 * Any defect is a HintError.
 */
export const readHint = (frame: Uint8Array, block: number): Hint => {
  const hint = decodeHint(decompressHint(frame))
  if (hint.block !== block)
    throw new HintError({ reason: "block-mismatch", detail: `hint for block ${hint.block}, not ${block}` })
  return hint
}
