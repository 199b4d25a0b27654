/**
 * What one AirDB client has materialised, and every decision about it, as plain data and pure transitions:
 * the command log applied (CommandReplay: the tail Φ(base, next] and the conflict window), the state-log
 * view (chain, begins), the chain reads use, and the read path. The shell (src/client) performs the storage
 * calls these ask for and never changes this state except through them.
 *
 * The read path is a two-step decision so that no read can be answered from a state that changed under it:
 * `read` answers from the tail or asks for a snapshot lookup on the adopted chain; `afterLookup` accepts the
 * lookup only if that chain is still the adopted one, and always re-checks the tail first (an adoption in
 * between rebased it: the cause of issue 23's empty `Get`).
 */
import { type Chain, chainEnd, emptyChain } from "./chain.js"
import { decide as standardDecide } from "./conflict.js"
import { applyStateRecord, emptyStateView, type StateRecord, type StateView, type StoreConfig } from "./coordination.js"
import { CommandReplay } from "./replay.js"
import { admitsEntry, needsSnapshot, type TimelyPolicy } from "./timely.js"
import { type CommandEntry, entryOf, type Key, type KeyState, type Outcome, type Ts } from "./types.js"

/**
 * The decisions a simulator may swap for broken ones, to show that its checks catch each (a checker that never
 * fails proves nothing). Production code only ever uses STANDARD_VARIANT.
 */
export interface CoreVariant {
  /** The commit decision of an intention. */
  readonly decide: typeof standardDecide
  /** ⊕ for a key both a older and a newer snapshot hold: the newer state. */
  readonly mergeKey: (older: KeyState, newer: KeyState) => KeyState
  /** Whether an entry may be appended at n: afterwards n + 1 − i_k ≤ (1+ε)B. */
  readonly admits: (n: number, chainEnd: number, policy: TimelyPolicy) => boolean
  /** A `Get` rides a bus (false: answered from the tail this client happens to have: stale). */
  readonly getRidesBus: boolean
  /** A read consults the tail before the snapshots (false: a snapshot's state wins over a newer tail). */
  readonly tailFirst: boolean
  /** Adopting a chain rebases the tail at the client's tail instead of the chain's end (true: keys modified since
   *  the chain's end leave the tail, as if an older snapshot covered them). */
  readonly adoptCoversTail: boolean
  /** A commit is acknowledged when its append is sent (true: before the log holds it). */
  readonly ackOnSend: boolean
}

export const STANDARD_VARIANT: CoreVariant = {
  decide: standardDecide,
  mergeKey: (_older, newer) => newer,
  admits: admitsEntry,
  getRidesBus: true,
  tailFirst: true,
  adoptCoversTail: false,
  ackOnSend: false
}

/** The next step of a read at snapshot s(T). */
export type ReadStep =
  /** The key's state after s(T) entries (undefined: absent). */
  | { readonly _tag: "Value"; readonly state: KeyState | undefined }
  /** The key was modified at or after s(T): the reader must start again from a newer snapshot. */
  | { readonly _tag: "Moved" }
  /** Look the key up in these snapshots (storage), then call `afterLookup`. */
  | { readonly _tag: "Lookup"; readonly chain: Chain }

export class ClientState {
  replay: CommandReplay = new CommandReplay({ base: 0, next: 0, window: 1 })
  view: StateView = emptyStateView
  /** The chain whose snapshots reads use: its end is the replay's base. */
  adopted: Chain = emptyChain

  constructor(readonly variant: CoreVariant = STANDARD_VARIANT) {}

  /** A cold start at `chain` (read from the state log): replay from its end, reads on its snapshots. */
  start(config: StoreConfig, chain: Chain): void {
    this.adopted = chain
    this.replay = new CommandReplay({
      base: chainEnd(chain),
      next: chain.replayFrom.index,
      window: config.conflictWindow,
      decide: this.variant.decide
    })
  }

  /** The state log from `next` on: an empty view there (a cold start reads only the last segment). */
  resetView(config: StoreConfig, next: number): void {
    this.view = { ...emptyStateView, config, next }
  }

  /** Entries applied: the position a tail check reached. */
  get next(): number {
    return this.replay.next
  }

  applyEntry(entry: CommandEntry, history?: ReadonlyMap<Key, Ts | undefined>): ReadonlyArray<Outcome> {
    return this.replay.apply(entry, history)
  }

  /** Applies state records in order; true when the chain changed. */
  applyStateRecords(records: ReadonlyArray<StateRecord>, nowMs: number): boolean {
    const before = this.view.chain
    for (const record of records) this.view = applyStateRecord(this.view, record, nowMs)
    return this.view.chain !== before
  }

  /** The view's chain if reads should move to it: newer than the adopted one and reached by the replay. */
  adoptable(): Chain | undefined {
    const chain = this.view.chain
    if (chain === this.adopted || chainEnd(chain) > this.replay.next || chainEnd(chain) < this.replay.base) {
      return undefined
    }
    return chain
  }

  /**
   * Reads move to `chain` (whose indexes the shell loaded): the tail is rebased at its end, the keys last
   * modified before it leave the tail. False when the chain is no longer the one to adopt.
   */
  adopt(chain: Chain): boolean {
    if (this.adoptable() !== chain) return false
    this.replay.rebase(this.variant.adoptCoversTail ? this.replay.next : chainEnd(chain))
    this.adopted = chain
    return true
  }

  /** A read at snapshot s(T): from the tail, or a lookup on the adopted chain's snapshots. */
  read(key: Key, snapshot: number): ReadStep {
    const inTail = this.replay.get(key)
    if (inTail !== undefined) return this.at(inTail, snapshot)
    return { _tag: "Lookup", chain: this.adopted }
  }

  /**
   * The lookup `read` asked for came back with `state` from `chain`. Why the answer is the state at s(T): the
   * tail, consulted after the bus (next >= s(T)), holds every key modified since the chain's end; a key not in
   * it was last modified before the chain's end, and snapshots keep each key's last modification, checked
   * against s(T) whichever side of s(T) the chain's end lies.
   */
  afterLookup(key: Key, snapshot: number, chain: Chain, state: KeyState | undefined): ReadStep {
    const inTail = this.replay.get(key)
    if (inTail !== undefined) return this.at(inTail, snapshot)
    if (chain !== this.adopted) return { _tag: "Lookup", chain: this.adopted }
    return this.at(state, snapshot)
  }

  /** A state found somewhere, judged at s(T) with no further checks (the simulator's broken read paths). */
  judge(state: KeyState | undefined, snapshot: number): ReadStep {
    return this.at(state, snapshot)
  }

  private at(state: KeyState | undefined, snapshot: number): ReadStep {
    return state !== undefined && entryOf(state.modified) >= snapshot ? { _tag: "Moved" } : { _tag: "Value", state }
  }

  /** n − i_k ≥ B: a snapshot should start. */
  snapshotDue(policy: TimelyPolicy): boolean {
    return needsSnapshot(this.replay.next, chainEnd(this.view.chain), policy)
  }

  /** Whether this client may append an entry at its tail now (the timely bound). */
  admitsNext(policy: TimelyPolicy): boolean {
    return this.variant.admits(this.replay.next, chainEnd(this.view.chain), policy)
  }
}
