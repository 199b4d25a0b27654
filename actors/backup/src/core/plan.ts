/**
 * Planning a batch's prefetch (§4.2 steps 1-2, Algorithm 2 Phase 1): the hinted keys of a batch of blocks
 * merged into one set in key order, routed by source, and cut into contiguous slices for the readers.
 *
 * An entry is what one read answers: a plain key (its PlainState value, the same for every block of the
 * batch that hints it plain), a zero key (no read at all), or a change-set key as of one block's parent
 * (the two-step lookup; a key changing inside the batch has one entry per block that needs it). Entries are
 * sorted by key, then by the block they are read as of, so each reader walks its slice of the B-tree
 * forward and every page is faulted at most once per batch.
 *
 * Pure: hints in, plan out. A hint that failed to decode arrives as its error and its block is planned
 * with no entries (it runs on demand).
 */
import { type Address, type Hint, type HintErrorReason, Source, type StorageKey } from "@reef/chain/core"

export interface BatchBlock {
  readonly number: number
  /** The decoded hint, or why there is none (missing, or refused by the codec). */
  readonly hint: Hint | { readonly error: HintErrorReason | "missing" }
}

export interface PlannedBlock {
  readonly number: number
  /** The hint's storage keys, and the batch entry holding each one's value (parallel arrays). */
  readonly keys: ReadonlyArray<StorageKey>
  readonly entries: Int32Array
  readonly code: ReadonlyArray<Address>
  /** Why the block has no hint, if it has none. */
  readonly hintError: HintErrorReason | "missing" | undefined
}

export interface Slice {
  readonly start: number
  readonly end: number
}

export interface BatchPlan {
  readonly blocks: ReadonlyArray<PlannedBlock>
  /** Every entry in key order, then by the block its read is as of. */
  readonly keys: ReadonlyArray<StorageKey>
  readonly sources: Uint8Array
  /** The block a change-set entry is read as of (the needing block's parent); -1 for the others. */
  readonly asOf: Float64Array
  /** Contiguous ranges of entries, one per reader, balanced by expected seeks. */
  readonly slices: ReadonlyArray<Slice>
  /** Every contract whose code some block's hint listed, in address order. */
  readonly code: ReadonlyArray<Address>
  readonly counts: { readonly plain: number; readonly zero: number; readonly changeset: number }
}

const hasHint = (hint: BatchBlock["hint"]): hint is Hint => !("error" in hint)

/** Growable columns of draft entries; drafts of the same key are chained through `next`. */
class Drafts {
  keys: Array<StorageKey> = []
  sources = new Uint8Array(1024)
  asOf = new Float64Array(1024)
  next = new Int32Array(1024)
  length = 0

  add(key: StorageKey, source: number, asOf: number, next: number): number {
    if (this.length === this.sources.length) {
      const grow = <T extends Uint8Array | Float64Array | Int32Array>(a: T): T => {
        const bigger = new (a.constructor as new (n: number) => T)(a.length * 2)
        bigger.set(a)
        return bigger
      }
      this.sources = grow(this.sources)
      this.asOf = grow(this.asOf)
      this.next = grow(this.next)
    }
    const id = this.length++
    this.keys.push(key)
    this.sources[id] = source
    this.asOf[id] = asOf
    this.next[id] = next
    return id
  }
}

export const planBatch = (blocks: ReadonlyArray<BatchBlock>, readers: number): BatchPlan => {
  const drafts = new Drafts()
  /** The latest draft of each key (earlier ones follow `next`). */
  const byKey = new Map<StorageKey, number>()
  const blockDrafts: Array<Int32Array> = []
  const codeSet = new Set<Address>()
  for (const block of blocks) {
    if (!hasHint(block.hint)) {
      blockDrafts.push(new Int32Array(0))
      continue
    }
    const { storage, sources, code } = block.hint
    const ids = new Int32Array(storage.length)
    for (let i = 0; i < storage.length; i++) {
      const key = storage[i]!
      const source = sources[i]!
      const asOf = source === Source.Changeset ? block.number - 1 : -1
      const head = byKey.get(key)
      let id = -1
      for (let d = head ?? -1; d >= 0; d = drafts.next[d]!) {
        if (drafts.sources[d] === source && drafts.asOf[d] === asOf) {
          id = d
          break
        }
      }
      if (id < 0) {
        id = drafts.add(key, source, asOf, head ?? -1)
        byKey.set(key, id)
      }
      ids[i] = id
    }
    blockDrafts.push(ids)
    for (const address of code) codeSet.add(address)
  }

  // Keys in byte order (a latin1 string sorts by its bytes), then a key's drafts by source and block.
  const sortedKeys = [...byKey.keys()].sort()
  const total = drafts.length
  const rank = new Int32Array(total)
  const keys: Array<StorageKey> = new Array(total)
  const sources = new Uint8Array(total)
  const asOf = new Float64Array(total)
  const counts = { plain: 0, zero: 0, changeset: 0 }
  let position = 0
  const chain: Array<number> = []
  for (const key of sortedKeys) {
    chain.length = 0
    for (let d = byKey.get(key)!; d >= 0; d = drafts.next[d]!) chain.push(d)
    if (chain.length > 1)
      chain.sort((a, b) => drafts.sources[a]! - drafts.sources[b]! || drafts.asOf[a]! - drafts.asOf[b]!)
    for (const d of chain) {
      rank[d] = position
      keys[position] = key
      const source = drafts.sources[d]!
      sources[position] = source
      asOf[position] = drafts.asOf[d]!
      if (source === Source.Plain) counts.plain++
      else if (source === Source.Zero) counts.zero++
      else counts.changeset++
      position++
    }
  }

  const planned = blocks.map((block, b): PlannedBlock => {
    const ids = blockDrafts[b]!
    const entries = new Int32Array(ids.length)
    for (let i = 0; i < ids.length; i++) entries[i] = rank[ids[i]!]!
    return hasHint(block.hint)
      ? { number: block.number, keys: block.hint.storage, entries, code: block.hint.code, hintError: undefined }
      : { number: block.number, keys: [], entries, code: [], hintError: block.hint.error }
  })
  return {
    blocks: planned,
    keys,
    sources,
    asOf,
    slices: sliceBySeeks(sources, readers),
    code: [...codeSet].sort(),
    counts
  }
}

/** Seeks an entry costs: none for zero, one for plain, two (history index, then change set) otherwise. */
const seeks = (source: number): number => (source === Source.Zero ? 0 : source === Source.Plain ? 1 : 2)

/** Cuts entries into at most `readers` contiguous slices of about equal seeks (empty slices dropped). */
export const sliceBySeeks = (sources: Uint8Array, readers: number): Array<Slice> => {
  let total = 0
  for (const s of sources) total += seeks(s)
  const slices: Array<Slice> = []
  if (total === 0) return slices
  const parts = Math.max(1, Math.min(readers, total))
  let start = 0
  let done = 0
  for (let i = 0; i < sources.length; i++) {
    done += seeks(sources[i]!)
    if (done * parts >= total * (slices.length + 1) && slices.length < parts - 1) {
      slices.push({ start, end: i + 1 })
      start = i + 1
    }
  }
  if (start < sources.length) slices.push({ start, end: sources.length })
  return slices.filter((s) => s.end > s.start)
}

/** Each block's cache: its hinted keys with the values read for their entries (`values` in entry order). */
export const blockCaches = (plan: BatchPlan, values: ArrayLike<number>): Array<Map<StorageKey, number>> =>
  plan.blocks.map((planned) => {
    const cache = new Map<StorageKey, number>()
    for (let k = 0; k < planned.keys.length; k++) cache.set(planned.keys[k]!, values[planned.entries[k]!]!)
    return cache
  })
