/**
 * Partial states Φ(i,j] (§3.2, §4.2): the keys the command entries i..j-1 modified, each with its value and
 * its last-modified timestamp. "Φ(0,j] = Φ(0,k] ⊕ Φ(k,j], where ⊕ indicates that the right-operand state
 * upserts the left state"; a merged state is again a state, which allows recursive compaction.
 */
import type { Key, KeyState } from "./types.js"

export interface PartialState {
  /** Φ(from, to]: covers command entries with from <= index < to. */
  readonly from: number
  readonly to: number
  readonly keys: ReadonlyMap<Key, KeyState>
}

export const emptyPartialState = (from: number): PartialState => ({ from, to: from, keys: new Map() })

/** Thrown by ⊕ on states that do not meet: a broken invariant of the caller, never a data error. */
export class NotAdjacentError extends Error {
  constructor(left: PartialState, right: PartialState) {
    super(`cannot merge Φ(${left.from},${left.to}] with Φ(${right.from},${right.to}]: they do not meet`)
  }
}

/**
 * Φ(a,b] ⊕ Φ(b,c] = Φ(a,c]. "The key-value pairs from Φ(k,j] overwrite any existing key-value pairs,
 * including the last modification time. Note that merging doesn't need to involve conflict checks."
 * `dropTombstones`: a state from 0 shadows nothing older, so its deletions can be forgotten.
 */
export const mergeStates = (
  left: PartialState,
  right: PartialState,
  options: { readonly dropTombstones?: boolean } = {}
): PartialState => {
  if (left.to !== right.from) throw new NotAdjacentError(left, right)
  const keys = new Map(left.keys)
  for (const [key, state] of right.keys) keys.set(key, state)
  if (options.dropTombstones === true && left.from === 0) {
    for (const [key, state] of keys) if (state.value === undefined) keys.delete(key)
  }
  return { from: left.from, to: right.to, keys }
}

/** Key states in key order (the order of snapshot blocks and scans: JavaScript string order). */
export const sortedKeyStates = (keys: ReadonlyMap<Key, KeyState>): Array<readonly [Key, KeyState]> =>
  [...keys].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

export const compareKeys = (a: Key, b: Key): number => (a < b ? -1 : a > b ? 1 : 0)
