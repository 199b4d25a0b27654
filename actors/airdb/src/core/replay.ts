/**
 * Replaying the command log (the transition function ρ of §3.2 for AirDB): entries are applied in log
 * order; each intention is decided (conflict.ts) and, when committed, its writes upsert the tail state
 * Φ(base, next] with their commit timestamp as last-modified. The base is the end of the snapshot chain:
 * what is before it lives in snapshots, so the tail stays bounded by the timely-snapshot invariant.
 *
 * A client that starts late (a cold start replays from the chain's end) has no modification window for the
 * entries before it. An intention whose snapshot s(T) precedes the first entry this replay applied may check
 * keys last modified before that entry: the caller supplies those keys' last modifications from the snapshots
 * (`history`, exact: a snapshot keeps each key's last-modified timestamp), so it decides exactly like a client
 * that saw everything.
 */
import { decide, ModificationWindow } from "./conflict.js"
import type { PartialState } from "./partial-state.js"
import {
  type CommandEntry,
  commitTs,
  type Key,
  type KeyState,
  type Outcome,
  SLOTS_PER_ENTRY,
  type Ts
} from "./types.js"

export class OutOfOrderEntryError extends Error {
  constructor(
    readonly expected: number,
    readonly got: number
  ) {
    super(`command entry ${got} applied when entry ${expected} was next`)
  }
}

export interface ReplayStart {
  /** End of the snapshot chain: the tail state holds entries from here on. */
  readonly base: number
  /** First entry to be applied (<= base; entries before base only feed the conflict window). */
  readonly next: number
  /** The store's conflict window, in entries. */
  readonly window: number
  /** The commit decision (the simulator swaps in broken ones to check that it notices). */
  readonly decide?: typeof decide
}

/** Thrown when an intention needs history before this replay's start that the caller did not supply. */
export class MissingHistoryError extends Error {
  constructor(readonly key: Key) {
    super(`last modification of ${key} before this replay's first entry was not supplied`)
  }
}

export class CommandReplay {
  /** The first entry this replay applied: its modification window knows nothing before it. */
  readonly knownFrom: number
  private _next: number
  private _base: number
  private readonly tail = new Map<Key, KeyState>()
  private readonly modifications: ModificationWindow
  private readonly decide: typeof decide

  constructor(start: ReplayStart) {
    if (start.next > start.base)
      throw new Error(`replay must start at or before its base (${start.next} > ${start.base})`)
    this._next = start.next
    this.knownFrom = start.next
    this._base = start.base
    this.modifications = new ModificationWindow(start.window)
    this.decide = start.decide ?? decide
  }

  /** Entries applied: the log position this replay has reached (a snapshot timestamp s(T)). */
  get next(): number {
    return this._next
  }

  get base(): number {
    return this._base
  }

  get window(): number {
    return this.modifications.window
  }

  /** Keys in the tail state Φ(base, next]. */
  get tailSize(): number {
    return this.tail.size
  }

  /** The key's state in Φ(base, next], if the tail modified it. */
  get(key: Key): KeyState | undefined {
    return this.tail.get(key)
  }

  /** Tail keys in [start, end) (end undefined: no bound), unordered. */
  *tailRange(start: Key, end: Key | undefined): Iterable<readonly [Key, KeyState]> {
    for (const entry of this.tail) {
      if (entry[0] >= start && (end === undefined || entry[0] < end)) yield entry
    }
  }

  /**
   * The keys whose last modification before `knownFrom` the next entries' decisions need (intentions whose
   * snapshot precedes it and that are not too old to commit anyway).
   */
  historyNeeded(entries: ReadonlyArray<CommandEntry>): ReadonlyArray<Key> {
    const keys = new Set<Key>()
    for (const entry of entries) {
      for (const t of entry.intentions) {
        if (t.snapshotEntries >= this.knownFrom || entry.index - t.snapshotEntries >= this.modifications.window)
          continue
        for (const k of t.checked) keys.add(k)
      }
    }
    return [...keys]
  }

  /**
   * Applies the next entry; returns one outcome per intention, in slot order. `history`: the last modification
   * (from snapshots) of the keys `historyNeeded` listed, undefined for a key never modified.
   */
  apply(entry: CommandEntry, history?: ReadonlyMap<Key, Ts | undefined>): ReadonlyArray<Outcome> {
    if (entry.index !== this._next) throw new OutOfOrderEntryError(this._next, entry.index)
    const outcomes: Array<Outcome> = []
    const intoTail = entry.index >= this._base
    const fromWindow = (k: Key): Ts | undefined => this.modifications.get(k)
    /** For an intention whose snapshot precedes this replay: the window, else the supplied history. */
    const withHistory = (k: Key): Ts | undefined => {
      const known = this.modifications.get(k)
      if (known !== undefined) return known
      if (history === undefined || !history.has(k)) throw new MissingHistoryError(k)
      return history.get(k)
    }
    entry.intentions.forEach((intention, slot) => {
      const ts = commitTs(entry.index, slot)
      const lastModified = intention.snapshotEntries < this.knownFrom ? withHistory : fromWindow
      const decision = this.decide(intention, entry.index, this.modifications.window, lastModified)
      if (decision._tag === "Abort") {
        outcomes.push({
          _tag: "Aborted",
          ts,
          reason: decision.reason,
          ...(decision.key === undefined ? {} : { key: decision.key })
        })
        return
      }
      for (const w of intention.writes) {
        this.modifications.record(entry.index, w.key, ts)
        if (intoTail) this.tail.set(w.key, { value: w.value, modified: ts })
      }
      outcomes.push({ _tag: "Committed", ts })
    })
    this.modifications.advance(entry.index)
    this._next++
    return outcomes
  }

  /** Φ(base, next] as a partial state of its own (a copy: the snapshot to write while replay goes on). */
  snapshot(): PartialState {
    return { from: this._base, to: this._next, keys: new Map(this.tail) }
  }

  /**
   * The snapshot chain now ends at `base` (<= next): tail keys last modified before it are in a snapshot
   * and leave the tail; those modified since stay.
   */
  rebase(base: number): void {
    if (base > this._next) throw new Error(`cannot rebase at ${base}: replay is at ${this._next}`)
    if (base <= this._base) return
    const since = base * SLOTS_PER_ENTRY
    for (const [key, state] of this.tail) if (state.modified < since) this.tail.delete(key)
    this._base = base
  }
}
