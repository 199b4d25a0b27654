/**
 * A block's parent state read on demand from the store: each first access is reth's two-step lookup as
 * of the parent block. This is how the primary executes, and the baseline a backup is measured against.
 *
 * The baseline also keeps reth's cross-block cache (Appendix E.4): an LRU of storage values and of code
 * that survives across blocks and is updated with each block's final values, so a key read again a few
 * blocks later costs no lookup. The hinted backup has no such cache (§4.2, memory discipline).
 */
import type { PreState } from "../runtime/execution.js"
import type { Address, StorageKey } from "./keys.js"
import { type ReadSource, SOURCE_UNKNOWN, Source, type StateReader } from "./store.js"

/** A bounded least-recently-used map (Map keeps insertion order: a hit moves the entry to the end). */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>()

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }

  set(key: K, value: V): void {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K)
  }
}

/** reth's cross-block cache sizes (Appendix E.4): 1M storage slots, 10K bytecodes. */
export const RETH_STORAGE_CACHE_ENTRIES = 1_000_000
export const RETH_CODE_CACHE_ENTRIES = 10_000

export interface CrossBlockCache {
  readonly storage: LruCache<StorageKey, number>
  readonly code: LruCache<Address, Uint8Array>
}

export const crossBlockCache = (
  storageEntries = RETH_STORAGE_CACHE_ENTRIES,
  codeEntries = RETH_CODE_CACHE_ENTRIES
): CrossBlockCache => ({ storage: new LruCache(storageEntries), code: new LruCache(codeEntries) })

/** After a block: its final values become the cache's (they are the next block's parent state). */
export const absorbBlock = (cache: CrossBlockCache, finalValues: ReadonlyMap<StorageKey, number>): void => {
  for (const [key, value] of finalValues) cache.storage.set(key, value)
}

/** Counters of where a block's first accesses were served from. */
export interface ReadCounters {
  cacheHits: number
  storeReads: number
  codeReads: number
  readonly bySource: [plain: number, zero: number, changeset: number]
}

export const emptyReadCounters = (): ReadCounters => ({
  cacheHits: 0,
  storeReads: 0,
  codeReads: 0,
  bySource: [0, 0, 0]
})

export class StoreState implements PreState {
  lastSource: ReadSource = Source.Zero
  readonly counters: ReadCounters = emptyReadCounters()

  constructor(
    private readonly reader: StateReader,
    /** The parent block: reads see the state at its end. */
    private readonly asOf: number,
    /** The head of the snapshot the reader reads. */
    private readonly head: number,
    private readonly cache?: CrossBlockCache
  ) {}

  storage(key: StorageKey): number {
    if (this.cache !== undefined) {
      const cached = this.cache.storage.get(key)
      if (cached !== undefined) {
        this.counters.cacheHits++
        this.lastSource = SOURCE_UNKNOWN
        return cached
      }
    }
    const value = this.reader.storage(key, this.asOf, this.head)
    const source = this.reader.lastSource
    this.lastSource = source
    this.counters.storeReads++
    this.counters.bySource[source]++
    return value
  }

  code(address: Address): Uint8Array | undefined {
    const cached = this.cache?.code.get(address)
    if (cached !== undefined) return cached
    const code = this.reader.code(address)
    this.counters.codeReads++
    if (code !== undefined) this.cache?.code.set(address, code)
    return code
  }
}
