/**
 * A brute-force model of the store: the genesis and every block's changes in memory, a read as of a block
 * replays them from genesis. Slow and obviously right; the LMDB store is tested against it.
 */
import type { PreState } from "../runtime/execution.js"
import type { Address, StorageKey } from "./keys.js"
import { Source, type StorageChange } from "./store.js"

export class StateModel {
  private readonly blocks: Array<ReadonlyMap<StorageKey, number>> = []

  constructor(private readonly genesis: ReadonlyMap<StorageKey, number>) {}

  get head(): number {
    return this.blocks.length
  }

  /** The value of every key at the end of block `asOf`. */
  stateAt(asOf: number): Map<StorageKey, number> {
    const state = new Map(this.genesis)
    for (let b = 0; b < asOf; b++) for (const [key, value] of this.blocks[b]!) state.set(key, value)
    return state
  }

  read(key: StorageKey, asOf: number): number {
    for (let b = Math.min(asOf, this.blocks.length); b > 0; b--) {
      const value = this.blocks[b - 1]!.get(key)
      if (value !== undefined) return value
    }
    return this.genesis.get(key) ?? 0
  }

  /** The cheapest source of a read as of `asOf` on a store at this head (what the store reports). */
  sourceOf(key: StorageKey, asOf: number): Source {
    for (let b = asOf + 1; b <= this.blocks.length; b++) if (this.blocks[b - 1]!.has(key)) return Source.Changeset
    return this.read(key, this.head) === 0 ? Source.Zero : Source.Plain
  }

  /** Applies a block given as new values; returns its changes (keys whose value differs) for the store. */
  apply(writes: ReadonlyMap<StorageKey, number>): Array<StorageChange> {
    const changes: Array<StorageChange> = []
    const effective = new Map<StorageKey, number>()
    for (const [key, after] of writes) {
      const before = this.read(key, this.head)
      if (before !== after) {
        changes.push({ key, before, after })
        effective.set(key, after)
      }
    }
    this.blocks.push(effective)
    return changes
  }
}

/**
 * A parent state held in memory (tests): every key's latest value and the code by address. `apply` moves
 * it to the next block.
 */
export class MapState implements PreState {
  lastSource: Source = Source.Zero

  constructor(
    readonly values: Map<StorageKey, number>,
    readonly codes: ReadonlyMap<Address, Uint8Array>
  ) {}

  storage(key: StorageKey): number {
    const value = this.values.get(key)
    this.lastSource = value === undefined ? Source.Zero : Source.Plain
    return value ?? 0
  }

  code(address: Address): Uint8Array | undefined {
    return this.codes.get(address)
  }

  apply(changes: ReadonlyArray<StorageChange>): void {
    for (const { key, after } of changes) {
      if (after === 0) this.values.delete(key)
      else this.values.set(key, after)
    }
  }
}
