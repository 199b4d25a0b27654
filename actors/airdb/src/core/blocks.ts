/**
 * Snapshot blocks and their index (§3.2: "Reading a key-value from Φ requires only logarithmic I/O with
 * respect to the size of Φ, using a conventional tree-structured index"). A snapshot's key states are cut, in
 * key order, into blocks of bounded size; the index lists each block's first key and where it is stored. A
 * client keeps the (small) indexes of the live snapshots and binary-searches them: a point read costs one
 * block read per live snapshot, at most, and usually none once the block is cached.
 */
import { compareKeys } from "./partial-state.js"
import type { Key, KeyState } from "./types.js"

export interface BlockRef {
  readonly firstKey: Key
  /** Where the block is in the snapshot's segment, and its stored size (a byte-range store reads just it). */
  readonly position: number
  readonly length: number
  readonly keys: number
}

export type KeyStateEntry = readonly [Key, KeyState]

/** UTF-8 length of a string, without encoding it. */
export const utf8Length = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** Bytes a key state takes in a block, close to its protobuf size. */
export const keyStateBytes = (key: Key, state: KeyState): number =>
  utf8Length(key) + (state.value?.byteLength ?? 0) + 16

/**
 * Cuts sorted key states into blocks of about `targetBytes` (a key state larger than that gets a block of its
 * own). Deterministic: the same states always give the same blocks.
 */
export const cutBlocks = (
  sorted: ReadonlyArray<KeyStateEntry>,
  targetBytes: number
): Array<ReadonlyArray<KeyStateEntry>> => {
  const blocks: Array<Array<KeyStateEntry>> = []
  let current: Array<KeyStateEntry> = []
  let bytes = 0
  for (const entry of sorted) {
    const size = keyStateBytes(entry[0], entry[1])
    if (current.length > 0 && bytes + size > targetBytes) {
      blocks.push(current)
      current = []
      bytes = 0
    }
    current.push(entry)
    bytes += size
  }
  if (current.length > 0) blocks.push(current)
  return blocks
}

/** The block that may hold `key`: the last whose first key is <= key, or -1 when key precedes them all. */
export const findBlock = (index: ReadonlyArray<BlockRef>, key: Key): number => {
  let lo = 0
  let hi = index.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (compareKeys(index[mid]!.firstKey, key) <= 0) {
      found = mid
      lo = mid + 1
    } else {
      hi = mid - 1
    }
  }
  return found
}

/** The blocks that may hold keys in [start, end) (end undefined: no bound), as [first, last] or undefined. */
export const blocksInRange = (
  index: ReadonlyArray<BlockRef>,
  start: Key,
  end: Key | undefined
): readonly [number, number] | undefined => {
  if (index.length === 0) return undefined
  const first = Math.max(0, findBlock(index, start))
  let last = index.length - 1
  if (end !== undefined) {
    last = findBlock(index, end)
    // A block that starts exactly at `end` holds nothing in range.
    if (last >= 0 && index[last]!.firstKey === end) last--
  }
  return last < first ? undefined : [first, last]
}

/** The key's state in a sorted block, by binary search. */
export const findInBlock = (block: ReadonlyArray<KeyStateEntry>, key: Key): KeyState | undefined => {
  let lo = 0
  let hi = block.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const c = compareKeys(block[mid]![0], key)
    if (c === 0) return block[mid]![1]
    if (c < 0) lo = mid + 1
    else hi = mid - 1
  }
  return undefined
}

/**
 * Merges two sorted runs of key states, the newer one winning on equal keys (⊕ over sorted blocks: a merge of
 * stored snapshots streams block by block and never holds either whole).
 */
export function* mergeSortedRuns(
  older: Iterable<KeyStateEntry>,
  newer: Iterable<KeyStateEntry>
): Generator<KeyStateEntry> {
  const a = older[Symbol.iterator]()
  const b = newer[Symbol.iterator]()
  let x = a.next()
  let y = b.next()
  while (!x.done || !y.done) {
    if (y.done || (!x.done && compareKeys(x.value[0], y.value[0]) < 0)) {
      yield x.value as KeyStateEntry
      x = a.next()
    } else if (x.done || compareKeys(y.value[0], x.value[0]) < 0) {
      yield y.value
      y = b.next()
    } else {
      yield y.value
      x = a.next()
      y = b.next()
    }
  }
}
