/**
 * Byte layout shared by the store and the hint format (pure: no I/O, no runtime): reth's 20-byte addresses
 * and 32-byte slots, 52-byte storage keys, 8-byte big-endian block numbers.
 */
export const ADDRESS_BYTES = 20
export const SLOT_BYTES = 32
export const KEY_BYTES = ADDRESS_BYTES + SLOT_BYTES
export const BLOCK_NUMBER_BYTES = 8

/** 20 bytes as a latin1 string. */
export type Address = string
/** 32 bytes as a latin1 string. */
export type Slot = string
/** address ‖ slot, 52 bytes as a latin1 string. */
export type StorageKey = string

const TWO_32 = 2 ** 32

/** Writes n (< 2^53) as 8 bytes big-endian. */
export const writeU64 = (target: Uint8Array, offset: number, n: number): void => {
  const hi = Math.floor(n / TWO_32)
  const lo = n >>> 0
  target[offset] = 0
  target[offset + 1] = (hi >>> 16) & 0xff
  target[offset + 2] = (hi >>> 8) & 0xff
  target[offset + 3] = hi & 0xff
  target[offset + 4] = lo >>> 24
  target[offset + 5] = (lo >>> 16) & 0xff
  target[offset + 6] = (lo >>> 8) & 0xff
  target[offset + 7] = lo & 0xff
}

/** Reads 8 bytes big-endian; -1 if the number is 2^53 or more (nothing here writes one). */
export const readU64OrInvalid = (source: Uint8Array, offset: number): number => {
  const hi =
    ((source[offset]! << 24) | (source[offset + 1]! << 16) | (source[offset + 2]! << 8) | source[offset + 3]!) >>> 0
  const lo =
    ((source[offset + 4]! << 24) | (source[offset + 5]! << 16) | (source[offset + 6]! << 8) | source[offset + 7]!) >>> 0
  return hi >= 0x200000 ? -1 : hi * TWO_32 + lo
}

/** Where a read as of a block found its value (the paper's σ: 0 plain, 1 zero, 2 change set). */
export const Source = { Plain: 0, Zero: 1, Changeset: 2 } as const
export type Source = (typeof Source)[keyof typeof Source]
