/**
 * Snapshots on storage: writing Φ(i,j] as blocks plus an index in a segment of its own, and reading it back
 * through the indexes (kept in memory: small) and a bounded block cache. A merge streams two stored
 * snapshots block by block into a new one (recursive compaction) and never holds either whole.
 */
import { randomBytes } from "node:crypto"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import {
  type BlockRef,
  blocksInRange,
  findBlock,
  findInBlock,
  type KeyStateEntry,
  keyStateBytes
} from "../core/blocks.js"
import type { SnapshotRef } from "../core/chain.js"
import { compareKeys } from "../core/partial-state.js"
import type { Key, KeyState } from "../core/types.js"
import { CorruptRecord, decodeBlock, decodeIndexPart, encodeBlock, encodeIndexPart } from "../log/record-codec.js"
import { appendOwned, DEFAULT_RETRY } from "../log/shared-log.js"
import type { AppendError, CreateError, ReadError, SegmentStoreShape } from "../segment/segment.js"
import { BlockCache } from "./block-cache.js"

export type SnapshotReadError = ReadError | CorruptRecord

/** A lookup that needs a block not in the cache. */
export const MISS: unique symbol = Symbol("airdb.cache-miss")
export type SnapshotWriteError = AppendError | CreateError

const transient = (e: { readonly _tag: string }) => e._tag === "SegmentTimeout" || e._tag === "SegmentUnavailable"
const retried = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.retry(effect, { schedule: DEFAULT_RETRY, while: transient })

/** Bytes of one index entry in an index part (an upper bound). */
const indexEntryBytes = (b: BlockRef) => b.firstKey.length * 3 + 32

/** Builds a snapshot segment: blocks appended as key states arrive in key order, then the index. */
export class SnapshotBuilder {
  private readonly refs: Array<BlockRef> = []
  private pending: Array<KeyStateEntry> = []
  private pendingBytes = 0
  private position = 0
  private keys = 0
  private bytes = 0
  private lastKey: Key | undefined

  constructor(
    private readonly store: SegmentStoreShape,
    readonly segment: string,
    private readonly blockBytes: number,
    /** Called with each block written (the creator caches its own blocks). */
    private readonly onBlock?: (position: number, entries: ReadonlyArray<KeyStateEntry>, bytes: number) => void
  ) {}

  static create(
    store: SegmentStoreShape,
    prefix: string,
    blockBytes: number,
    onBlock?: (position: number, entries: ReadonlyArray<KeyStateEntry>, bytes: number) => void
  ): Effect.Effect<SnapshotBuilder, CreateError> {
    const segment = `${prefix}-snap-${randomBytes(8).toString("hex")}`
    return Effect.as(retried(store.create(segment)), new SnapshotBuilder(store, segment, blockBytes, onBlock))
  }

  add(key: Key, state: KeyState): Effect.Effect<void, SnapshotWriteError> {
    if (this.lastKey !== undefined && compareKeys(this.lastKey, key) >= 0) {
      return Effect.die(new Error(`snapshot keys out of order: ${this.lastKey} then ${key}`))
    }
    this.lastKey = key
    const size = keyStateBytes(key, state)
    const flush = this.pending.length > 0 && this.pendingBytes + size > this.blockBytes ? this.flush() : Effect.void
    return Effect.map(flush, () => {
      this.pending.push([key, state])
      this.pendingBytes += size
    })
  }

  private flush(): Effect.Effect<void, SnapshotWriteError> {
    const entries = this.pending
    this.pending = []
    this.pendingBytes = 0
    if (entries.length === 0) return Effect.void
    const record = encodeBlock(entries)
    return Effect.map(appendOwned(this.store, this.segment, this.position, record), (r) => {
      this.refs.push({
        firstKey: entries[0]![0],
        position: r.position,
        length: r.tail - r.position,
        keys: entries.length
      })
      this.onBlock?.(r.position, entries, record.byteLength)
      this.position = r.tail
      this.keys += entries.length
      this.bytes += record.byteLength
    })
  }

  /** Writes the last block and the index; the reference a chain record carries. */
  finish(from: number, to: number): Effect.Effect<SnapshotRef, SnapshotWriteError> {
    const self = this
    return Effect.gen(function* () {
      yield* self.flush()
      const indexPosition = self.position
      const budget = self.store.limits.maxAppendBytes - 64
      let part: Array<BlockRef> = []
      let partBytes = 0
      const writePart = (last: boolean) =>
        Effect.map(appendOwned(self.store, self.segment, self.position, encodeIndexPart(part, last)), (r) => {
          self.position = r.tail
          part = []
          partBytes = 0
        })
      for (const ref of self.refs) {
        if (part.length > 0 && partBytes + indexEntryBytes(ref) > budget) yield* writePart(false)
        part.push(ref)
        partBytes += indexEntryBytes(ref)
      }
      yield* writePart(true)
      return {
        from,
        to,
        segment: self.segment,
        indexPosition,
        keys: self.keys,
        bytes: self.bytes,
        blocks: self.refs.length
      }
    })
  }
}

/** Reads a snapshot's index: the parts from its position until the last one. */
export const loadIndex = (
  store: SegmentStoreShape,
  ref: SnapshotRef
): Effect.Effect<ReadonlyArray<BlockRef>, SnapshotReadError> =>
  Effect.gen(function* () {
    const blocks: Array<BlockRef> = []
    let position = ref.indexPosition
    for (;;) {
      const records = yield* retried(store.read(ref.segment, position, { maxRecords: 4 }))
      if (records.length === 0) {
        return yield* new CorruptRecord({ segment: ref.segment, position, reason: "snapshot index ends early" })
      }
      for (const r of records) {
        const part = decodeIndexPart(r.bytes, ref.segment, r.position)
        if (part instanceof CorruptRecord) return yield* part
        blocks.push(...part.blocks)
        if (part.last) return blocks
        position = r.next
      }
    }
  })

/** The live snapshots' indexes and a bounded cache of their blocks: point reads and range reads. */
export class SnapshotReader {
  private readonly indexes = new Map<string, ReadonlyArray<BlockRef>>()
  /** Block reads in flight, by cache key. */
  private readonly loading = new Map<string, Deferred.Deferred<ReadonlyArray<KeyStateEntry>, SnapshotReadError>>()
  readonly cache: BlockCache
  blockReads = 0

  constructor(
    private readonly store: SegmentStoreShape,
    cacheBytes: number
  ) {
    this.cache = new BlockCache(cacheBytes)
  }

  hasIndex(segment: string): boolean {
    return this.indexes.has(segment)
  }

  setIndex(segment: string, blocks: ReadonlyArray<BlockRef>): void {
    this.indexes.set(segment, blocks)
  }

  /** Forgets the indexes and cached blocks of snapshots that are no longer live. */
  retain(snapshots: ReadonlyArray<SnapshotRef>): void {
    const live = new Set(snapshots.map((s) => s.segment))
    for (const segment of this.indexes.keys()) {
      if (!live.has(segment)) {
        this.indexes.delete(segment)
        this.cache.dropSegment(segment)
      }
    }
  }

  /** Whether every one of these snapshots' indexes is loaded. */
  hasIndexes(snapshots: ReadonlyArray<SnapshotRef>): boolean {
    return snapshots.every((s) => this.indexes.has(s.segment))
  }

  /** Loads the indexes of snapshots not loaded yet. */
  ensureIndexes(snapshots: ReadonlyArray<SnapshotRef>): Effect.Effect<void, SnapshotReadError> {
    const missing = snapshots.filter((s) => !this.indexes.has(s.segment))
    return Effect.forEach(
      missing,
      (s) => Effect.map(loadIndex(this.store, s), (blocks) => void this.indexes.set(s.segment, blocks)),
      { concurrency: 8, discard: true }
    )
  }

  indexBytes(): number {
    let n = 0
    for (const blocks of this.indexes.values()) for (const b of blocks) n += indexEntryBytes(b)
    return n
  }

  block(segment: string, ref: BlockRef): Effect.Effect<ReadonlyArray<KeyStateEntry>, SnapshotReadError> {
    const key = BlockCache.key(segment, ref.position)
    const cached = this.cache.get(key)
    if (cached !== undefined) return Effect.succeed(cached.entries)
    // Readers missing the same block share one storage read (a cold cache under many readers would
    // otherwise read each block once per reader). The read runs in a fiber of its own, so a reader that
    // gives up (a speculative read the tail answered) does not cancel it for the others.
    const loading = this.loading.get(key)
    if (loading !== undefined) return Deferred.await(loading)
    const done = Deferred.unsafeMake<ReadonlyArray<KeyStateEntry>, SnapshotReadError>(FiberId.none)
    this.loading.set(key, done)
    this.blockReads++
    const load = Effect.flatMap(
      retried(this.store.read(segment, ref.position, { maxRecords: 1, bytesHint: ref.length })),
      (records) => {
        const r = records[0]
        if (r === undefined) {
          return Effect.fail(new CorruptRecord({ segment, position: ref.position, reason: "indexed block missing" }))
        }
        const entries = decodeBlock(r.bytes, segment, r.position)
        if (entries instanceof CorruptRecord) return Effect.fail(entries)
        this.cache.put(key, { entries, bytes: r.bytes.byteLength })
        return Effect.succeed(entries)
      }
    )
    return Effect.zipRight(
      Effect.forkDaemon(
        Effect.flatMap(Effect.exit(load), (exit) => {
          this.loading.delete(key)
          return Deferred.done(done, exit)
        })
      ),
      Deferred.await(done)
    )
  }

  /**
   * The key's state from cached blocks only, without waiting: `MISS` when a block it needs is not cached (then
   * `lookup` reads it).
   */
  lookupCached(snapshots: ReadonlyArray<SnapshotRef>, key: Key): KeyState | undefined | typeof MISS {
    for (let i = snapshots.length - 1; i >= 0; i--) {
      const s = snapshots[i]!
      const index = this.indexes.get(s.segment)
      if (index === undefined) return MISS
      const b = findBlock(index, key)
      if (b < 0) continue
      const block = this.cache.get(BlockCache.key(s.segment, index[b]!.position))
      if (block === undefined) return MISS
      const state = findInBlock(block.entries, key)
      if (state !== undefined) return state
    }
    return undefined
  }

  /** The key's state in the newest snapshot that has it (a tombstone counts), or undefined. */
  lookup(snapshots: ReadonlyArray<SnapshotRef>, key: Key): Effect.Effect<KeyState | undefined, SnapshotReadError> {
    const self = this
    return Effect.gen(function* () {
      for (let i = snapshots.length - 1; i >= 0; i--) {
        const s = snapshots[i]!
        // A reader of a chain that was replaced meanwhile may find its index dropped: load it again.
        const index = yield* self.indexOf(s)
        const b = findBlock(index, key)
        if (b < 0) continue
        const state = findInBlock(yield* self.block(s.segment, index[b]!), key)
        if (state !== undefined) return state
      }
      return undefined
    })
  }

  /** Every key state of one snapshot in [start, end), in key order, block by block. */
  scanSnapshot(
    s: SnapshotRef,
    start: Key,
    end: Key | undefined
  ): Effect.Effect<ReadonlyArray<KeyStateEntry>, SnapshotReadError> {
    const self = this
    return Effect.gen(function* () {
      const index = self.indexes.get(s.segment) ?? (yield* loadIndex(self.store, s))
      const range = blocksInRange(index, start, end)
      if (range === undefined) return []
      const out: Array<KeyStateEntry> = []
      for (let b = range[0]; b <= range[1]; b++) {
        for (const e of yield* self.block(s.segment, index[b]!)) {
          if (compareKeys(e[0], start) >= 0 && (end === undefined || compareKeys(e[0], end) < 0)) out.push(e)
        }
      }
      return out
    })
  }

  /** Reads blocks [first, first+count) of a snapshot straight from storage (merges: not through the cache). */
  readBlocks(
    s: SnapshotRef,
    index: ReadonlyArray<BlockRef>,
    first: number,
    count: number
  ): Effect.Effect<ReadonlyArray<KeyStateEntry>, SnapshotReadError> {
    return Effect.map(
      Effect.forEach(
        index.slice(first, first + count),
        (ref) =>
          Effect.flatMap(
            retried(this.store.read(s.segment, ref.position, { maxRecords: 1, bytesHint: ref.length })),
            (records) => {
              const r = records[0]
              if (r === undefined) {
                return Effect.fail(
                  new CorruptRecord({ segment: s.segment, position: ref.position, reason: "indexed block missing" })
                )
              }
              const entries = decodeBlock(r.bytes, s.segment, r.position)
              return entries instanceof CorruptRecord ? Effect.fail(entries) : Effect.succeed(entries)
            }
          ),
        { concurrency: count }
      ),
      (blocks) => blocks.flat()
    )
  }

  indexOf(s: SnapshotRef): Effect.Effect<ReadonlyArray<BlockRef>, SnapshotReadError> {
    const index = this.indexes.get(s.segment)
    return index === undefined ? loadIndex(this.store, s) : Effect.succeed(index)
  }
}

/** Reads one stored snapshot in key order, a few blocks at a time. */
class SnapshotStream {
  private entries: ReadonlyArray<KeyStateEntry> = []
  private at = 0
  private nextBlock = 0

  constructor(
    private readonly reader: SnapshotReader,
    private readonly ref: SnapshotRef,
    private readonly index: ReadonlyArray<BlockRef>,
    private readonly window: number
  ) {}

  /** The next key state, or undefined at the end. */
  next(): Effect.Effect<KeyStateEntry | undefined, SnapshotReadError> {
    if (this.at < this.entries.length) return Effect.succeed(this.entries[this.at++])
    if (this.nextBlock >= this.index.length) return Effect.succeed(undefined)
    const first = this.nextBlock
    this.nextBlock += this.window
    return Effect.flatMap(this.reader.readBlocks(this.ref, this.index, first, this.window), (entries) => {
      this.entries = entries
      this.at = 0
      return this.next()
    })
  }
}

/**
 * Writes Φ(older.from, newer.to] = older ⊕ newer. When the merged snapshot starts at 0 it shadows nothing, so
 * its tombstones are dropped.
 */
export const mergeSnapshots = (
  reader: SnapshotReader,
  builder: SnapshotBuilder,
  older: SnapshotRef,
  newer: SnapshotRef,
  /** ⊕ for a key both hold (the core's: the newer state). */
  mergeKey: (older: KeyState, newer: KeyState) => KeyState = (_older, newerState) => newerState
): Effect.Effect<SnapshotRef, SnapshotReadError | SnapshotWriteError> =>
  Effect.gen(function* () {
    const a = new SnapshotStream(reader, older, yield* reader.indexOf(older), 8)
    const b = new SnapshotStream(reader, newer, yield* reader.indexOf(newer), 8)
    let x = yield* a.next()
    let y = yield* b.next()
    const emit = (e: KeyStateEntry) =>
      older.from === 0 && e[1].value === undefined ? Effect.void : builder.add(e[0], e[1])
    while (x !== undefined || y !== undefined) {
      const c = x === undefined ? 1 : y === undefined ? -1 : compareKeys(x[0], y[0])
      if (c < 0) {
        yield* emit(x!)
        x = yield* a.next()
      } else {
        // Equal keys: ⊕ decides (the newer snapshot's state).
        yield* emit(c === 0 ? [y![0], mergeKey(x![1], y![1])] : y!)
        if (c === 0) x = yield* a.next()
        y = yield* b.next()
      }
    }
    return yield* builder.finish(older.from, newer.to)
  })
