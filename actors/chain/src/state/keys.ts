/**
 * Byte layout of the chain's state, shaped like reth's: 20-byte addresses, 32-byte storage slots, and a
 * storage key that is address ‖ slot (52 bytes). In JS a key is the latin1 string of those bytes: strings
 * compare by code unit, so string order is the store's memcmp order, and a Map keys on it directly.
 *
 * Values are unsigned integers below 2^53, stored big-endian without leading zeros (reth's compact U256);
 * zero is stored as absence, as Ethereum deletes a slot set to zero.
 */
import {
  ADDRESS_BYTES,
  type Address,
  KEY_BYTES,
  readU64OrInvalid,
  type Slot,
  type StorageKey,
  writeU64 as writeU64Bytes
} from "../core/bytes.js"
import { StoreCorruptionError } from "./errors.js"

export {
  ADDRESS_BYTES,
  type Address,
  BLOCK_NUMBER_BYTES,
  KEY_BYTES,
  SLOT_BYTES,
  type Slot,
  type StorageKey,
  writeU64
} from "../core/bytes.js"

export const storageKey = (address: Address, slot: Slot): StorageKey => address + slot
export const keyAddress = (key: StorageKey): Address => key.slice(0, ADDRESS_BYTES)
export const keySlot = (key: StorageKey): Slot => key.slice(ADDRESS_BYTES)

/** The bytes of a latin1 key string (address, slot or storage key). */
export const latin1Bytes = (s: string): Buffer => Buffer.from(s, "latin1")
export const latin1String = (bytes: Uint8Array, offset: number, length: number): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset + offset, length).toString("latin1")
export const toHex = (s: string): string => Buffer.from(s, "latin1").toString("hex")
export const fromHex = (hex: string): string => Buffer.from(hex, "hex").toString("latin1")

export const isAddress = (s: string): boolean => s.length === ADDRESS_BYTES && isLatin1(s)
export const isStorageKey = (s: string): boolean => s.length === KEY_BYTES && isLatin1(s)
const isLatin1 = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return false
  return true
}

/** Reads 8 bytes big-endian; a number at or above 2^53 is corruption (nothing here writes one). */
export const readU64 = (source: Uint8Array, offset: number): number => {
  const n = readU64OrInvalid(source, offset)
  if (n < 0) throw new StoreCorruptionError({ what: "u64", detail: `above 2^53 at offset ${offset}` })
  return n
}

const EMPTY = Buffer.alloc(0)

/** A value's compact encoding: big-endian, no leading zeros; zero is empty. */
export const encodeValue = (value: number): Buffer => {
  if (value === 0) return EMPTY
  const scratch = Buffer.allocUnsafe(8)
  writeU64Bytes(scratch, 0, value)
  let first = 0
  while (scratch[first] === 0) first++
  return scratch.subarray(first)
}

/** Decodes a compact value (leading zeros tolerated); above 2^53 - 1 or over 32 bytes is corruption. */
export const decodeValue = (bytes: Uint8Array): number => {
  if (bytes.length > 32) throw new StoreCorruptionError({ what: "value", detail: `${bytes.length} bytes` })
  let value = 0
  for (let i = 0; i < bytes.length; i++) {
    value = value * 256 + bytes[i]!
    if (value > Number.MAX_SAFE_INTEGER) throw new StoreCorruptionError({ what: "value", detail: "above 2^53 - 1" })
  }
  return value
}
