/**
 * The commit decision of an intention at its commit timestamp c(T) (§4.1-4.2): OCC over the log. "For any
 * key in T's read-set (for SS) or write-set (for SI), if the last modification timestamp is within
 * (s(T), now), we can say there exists at least one conflicting transaction; thus, T should be aborted."
 *
 * Every client decides from the log alone, with no storage read: it keeps the last modification of every key
 * modified in the last `window` entries (ModificationWindow). A transaction whose snapshot is older than that
 * window aborts as too old, so the decision never needs history a client may not have. The window is a
 * property of the store (recorded in its state log), identical for every client.
 */
import type { AbortReason, Intention, Key, Ts } from "./types.js"
import { SLOTS_PER_ENTRY } from "./types.js"

export type Decision =
  | { readonly _tag: "Commit" }
  | { readonly _tag: "Abort"; readonly reason: AbortReason; readonly key?: Key }

/**
 * Decides intention `slot` of entry `entry`. `lastModified(key)` is the key's last modification before it
 * (earlier entries and earlier slots of this entry) when that lies within the window, else undefined.
 */
export const decide = (
  intention: Intention,
  entry: number,
  window: number,
  lastModified: (key: Key) => Ts | undefined
): Decision => {
  const s = intention.snapshotEntries
  // A snapshot cannot include the entry that commits it: only a corrupt or forged intention claims so.
  if (s > entry) return { _tag: "Abort", reason: "invalid-snapshot" }
  if (entry - s >= window) return { _tag: "Abort", reason: "snapshot-too-old" }
  const since = s * SLOTS_PER_ENTRY
  for (const key of intention.checked) {
    const modified = lastModified(key)
    if (modified !== undefined && modified >= since) return { _tag: "Abort", reason: "conflict", key }
  }
  return { _tag: "Commit" }
}

/**
 * The last modification of each key modified in the last `window` entries, with the entries' key lists to
 * forget them in order. A mutable structure owned by one replay; everything it answers is a function of the
 * entries applied.
 */
export class ModificationWindow {
  private readonly last = new Map<Key, Ts>()
  private readonly entries: Array<{ readonly entry: number; readonly keys: Array<Key>; readonly ts: Array<Ts> }> = []
  private head = 0

  constructor(readonly window: number) {
    if (!Number.isSafeInteger(window) || window < 1) throw new Error(`conflict window must be >= 1, got ${window}`)
  }

  get(key: Key): Ts | undefined {
    return this.last.get(key)
  }

  /** Records a write at `ts` of entry `entry` (entries arrive in order). */
  record(entry: number, key: Key, ts: Ts): void {
    const tail = this.entries.at(-1)
    if (tail === undefined || tail.entry !== entry || this.entries.length === this.head) {
      this.entries.push({ entry, keys: [key], ts: [ts] })
    } else {
      tail.keys.push(key)
      tail.ts.push(ts)
    }
    this.last.set(key, ts)
  }

  /** Forgets modifications of entries that no decision after entry `applied` can ask about. */
  advance(applied: number): void {
    const oldest = applied - this.window + 1
    while (this.head < this.entries.length && this.entries[this.head]!.entry < oldest) {
      const e = this.entries[this.head]!
      for (let i = 0; i < e.keys.length; i++) {
        if (this.last.get(e.keys[i]!) === e.ts[i]) this.last.delete(e.keys[i]!)
      }
      this.head++
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head)
      this.head = 0
    }
  }

  get size(): number {
    return this.last.size
  }
}
