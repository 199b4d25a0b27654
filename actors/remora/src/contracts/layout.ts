/**
 * Fixed binary layouts of the objects contracts read and write. Numbers are little-endian float64 holding
 * integers (cents, counts), exact below 2^53.
 */

/** FNV-1a over a string's UTF-16 code units: a cheap deterministic seed per key. */
export const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** xorshift32 stream from `seed` (never 0). */
export const fillDeterministic = (out: Uint8Array, from: number, seed: number): void => {
  let x = seed === 0 ? 0x9e3779b9 : seed
  for (let i = from; i < out.length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
}

/** A view on `bytes` for reading and writing float64 fields. */
export const view = (bytes: Uint8Array): DataView => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)

// Fields are read through an 8-byte scratch (no DataView per access: contracts read many small records).
const scratch = new Float64Array(1)
const scratchBytes = new Uint8Array(scratch.buffer)
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

export const getNumber = (bytes: Uint8Array, field: number): number => {
  if (!littleEndian) return view(bytes).getFloat64(field * 8, true)
  scratchBytes.set(bytes.subarray(field * 8, field * 8 + 8))
  return scratch[0]!
}

export const setNumber = (bytes: Uint8Array, field: number, value: number): void => {
  if (!littleEndian) {
    view(bytes).setFloat64(field * 8, value, true)
    return
  }
  scratch[0] = value
  bytes.set(scratchBytes, field * 8)
}

/** A record of `fields` float64 numbers. */
export const record = (values: ReadonlyArray<number>): Uint8Array => {
  const bytes = new Uint8Array(values.length * 8)
  const v = view(bytes)
  for (let i = 0; i < values.length; i++) v.setFloat64(i * 8, values[i]!, true)
  return bytes
}
