/**
 * The live snapshot chain: Φ(0,i1], Φ(i1,i2], ..., Φ(i_{k-1},i_k], contiguous from 0, each snapshot
 * stored as blocks plus an index in a segment of its own. A new snapshot extends the chain; a merge replaces
 * adjacent snapshots by one (recursive compaction, §3.2), so the chain stays short and a read costs one
 * block per snapshot: O(log |Φ|) block reads under a geometric merge policy.
 */

export interface SnapshotRef {
  readonly from: number
  readonly to: number
  readonly segment: string
  readonly indexPosition: number
  readonly keys: number
  readonly bytes: number
  readonly blocks: number
}

/** Where a command-log entry is stored: its segment's ordinal in the log and its position there. */
export interface LogLocation {
  readonly ordinal: number
  readonly position: number
  readonly index: number
}

export interface Chain {
  readonly snapshots: ReadonlyArray<SnapshotRef>
  /** Where a cold start begins replaying: the location of the entry at the chain's end. */
  readonly replayFrom: LogLocation
}

export const START_OF_LOG: LogLocation = { ordinal: 0, position: 0, index: 0 }

export const emptyChain: Chain = { snapshots: [], replayFrom: START_OF_LOG }

/** i_k: command entries before it are materialised. */
export const chainEnd = (chain: Chain): number => chain.snapshots.at(-1)?.to ?? 0

export const isContiguous = (snapshots: ReadonlyArray<SnapshotRef>): boolean =>
  snapshots.every((s, i) => s.from < s.to && s.from === (i === 0 ? 0 : snapshots[i - 1]!.to))

/** The chain with `next` = Φ(i_k, j] appended, or undefined when it does not start at the chain's end. */
export const extendChain = (chain: Chain, next: SnapshotRef, replayFrom: LogLocation): Chain | undefined =>
  next.from === chainEnd(chain) && next.to > next.from
    ? { snapshots: [...chain.snapshots, next], replayFrom }
    : undefined

/**
 * The chain with the adjacent snapshots that `merged` covers replaced by it, or undefined when its bounds are
 * not snapshot boundaries of the chain (another merge or extension got there first).
 */
export const mergeIntoChain = (chain: Chain, merged: SnapshotRef): Chain | undefined => {
  const first = chain.snapshots.findIndex((s) => s.from === merged.from)
  const last = chain.snapshots.findIndex((s) => s.to === merged.to)
  if (first < 0 || last <= first) return undefined
  return {
    snapshots: [...chain.snapshots.slice(0, first), merged, ...chain.snapshots.slice(last + 1)],
    replayFrom: chain.replayFrom
  }
}

/** Whether `next` is a legal successor of `current`: the same data, extended or with snapshots merged. */
export const isSuccessor = (current: Chain, next: Chain): boolean => {
  if (!isContiguous(next.snapshots) || chainEnd(next) < chainEnd(current)) return false
  // Every boundary of the new chain below the old end must be a boundary of the old chain.
  const boundaries = new Set(current.snapshots.map((s) => s.to))
  boundaries.add(0)
  return next.snapshots.every((s) => s.from >= chainEnd(current) || boundaries.has(s.from))
}

export interface MergePolicy {
  /** Merge two adjacent snapshots when the older holds at most `ratio` times the newer's keys. */
  readonly ratio: number
  /** Merge the newest two regardless, past this many snapshots. */
  readonly maxSnapshots: number
}

export const DEFAULT_MERGE_POLICY: MergePolicy = { ratio: 2, maxSnapshots: 12 }

/**
 * The adjacent pair to merge next, newest first: sizes then grow geometrically from the newest snapshot to the
 * oldest, so the chain holds O(log |Φ|) snapshots and each key is rewritten O(log |Φ|) times.
 */
export const pickMerge = (
  chain: Chain,
  policy: MergePolicy = DEFAULT_MERGE_POLICY
): readonly [SnapshotRef, SnapshotRef] | undefined => {
  const s = chain.snapshots
  for (let i = s.length - 1; i > 0; i--) {
    const older = s[i - 1]!
    const newer = s[i]!
    if (older.keys <= policy.ratio * Math.max(1, newer.keys)) return [older, newer]
  }
  return s.length > policy.maxSnapshots ? [s.at(-2)!, s.at(-1)!] : undefined
}
