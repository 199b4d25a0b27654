/**
 * What a backup's executor reads a block's parent state from.
 *
 * - `PrefetchedState`: the block's own cache, filled from its hint by the readers (§4.2 Phase 3), dropped
 *   with the block. A key the cache lacks (a hint that omitted it, or none at all) is read on demand: a hint
 *   can only make a read slower, never different.
 * - `OnDemandState`: the two-step lookup as of the parent block, the path without hints.
 * - `PendingWrites`: a following backup prefetches batches ahead of what it has committed, so a snapshot can
 *   predate the blocks just executed; their writes answer first. It holds only blocks some snapshot in use
 *   does not contain, so it stays as small as the pipeline.
 */
import {
  type Address,
  type PreState,
  type ReadSource,
  Source,
  type StateReader,
  type StorageChange,
  type StorageKey
} from "@reef/chain"

export class PendingWrites {
  private readonly latest = new Map<StorageKey, { readonly value: number; readonly block: number }>()
  private readonly byBlock = new Map<number, ReadonlyArray<StorageKey>>()

  get size(): number {
    return this.latest.size
  }

  record(block: number, changes: ReadonlyArray<StorageChange>): void {
    for (const { key, after } of changes) this.latest.set(key, { value: after, block })
    this.byBlock.set(
      block,
      changes.map((c) => c.key)
    )
  }

  /** The key's latest pending value, if a block after `snapshotHead` wrote it. */
  newerThan(key: StorageKey, snapshotHead: number): number | undefined {
    const entry = this.latest.get(key)
    return entry !== undefined && entry.block > snapshotHead ? entry.value : undefined
  }

  /** Forgets the writes of blocks up to `visible`: every snapshot still in use contains them. */
  prune(visible: number): void {
    for (const [block, keys] of this.byBlock) {
      if (block > visible) continue
      for (const key of keys) if (this.latest.get(key)?.block === block) this.latest.delete(key)
      this.byBlock.delete(block)
    }
  }
}

export interface ReadCounts {
  hits: number
  misses: number
  codeMisses: number
}

export class OnDemandState implements PreState {
  lastSource: ReadSource = Source.Zero
  reads = 0

  constructor(
    private readonly reader: StateReader,
    private readonly asOf: number,
    private readonly head: number,
    private readonly pending?: PendingWrites
  ) {}

  storage(key: StorageKey): number {
    const newer = this.pending?.newerThan(key, this.head)
    if (newer !== undefined) {
      this.lastSource = Source.Plain
      return newer
    }
    this.reads++
    const value = this.reader.storage(key, this.asOf, this.head)
    this.lastSource = this.reader.lastSource
    return value
  }

  code(address: Address): Uint8Array | undefined {
    return this.reader.code(address)
  }
}

export class PrefetchedState implements PreState {
  lastSource: ReadSource = Source.Zero
  readonly counts: ReadCounts = { hits: 0, misses: 0, codeMisses: 0 }

  constructor(
    private readonly cache: ReadonlyMap<StorageKey, number>,
    private readonly codes: ReadonlyMap<Address, Uint8Array>,
    /** Head of the snapshot the cache was read from. */
    private readonly cacheHead: number,
    private readonly fallback: PreState,
    private readonly pending?: PendingWrites
  ) {}

  storage(key: StorageKey): number {
    const newer = this.pending?.newerThan(key, this.cacheHead)
    if (newer !== undefined) {
      this.lastSource = Source.Plain
      return newer
    }
    const cached = this.cache.get(key)
    if (cached !== undefined) {
      this.counts.hits++
      this.lastSource = Source.Plain
      return cached
    }
    this.counts.misses++
    const value = this.fallback.storage(key)
    this.lastSource = this.fallback.lastSource
    return value
  }

  code(address: Address): Uint8Array | undefined {
    const code = this.codes.get(address)
    if (code !== undefined) return code
    this.counts.codeMisses++
    return this.fallback.code(address)
  }
}
