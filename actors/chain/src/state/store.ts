/**
 * The chain's state on disk, shaped like reth's (Ira paper, Appendix E.2), in one LMDB environment (an
 * mmap'd B-tree like reth's MDBX):
 *
 * - `plain`: PlainState, the latest value of every storage key (address ‖ slot → compact value);
 * - `changesets`: per block, the value each changed key had before the block (block ‖ key → compact value);
 * - `history`: per key, the blocks that changed it (key ‖ block → empty), the history index;
 * - `code`: contract code by address;
 * - `meta`: the head block and the genesis description.
 *
 * Reading a key as of block b is reth's two-step lookup: the history index says whether a block after b
 * changed the key; if so, the value comes from that block's change set, otherwise from PlainState; a key
 * never written reads as zero. Which of the three paths served a read is its source (§4.1: plain,
 * zero, change set): what the primary's hint annotates so a backup can skip steps.
 *
 * Reads are synchronous (a cold page is a page fault on the calling thread, exactly the cost Ira hides);
 * commits are lmdb-js asynchronous puts, written in one transaction by its write thread.
 */
import { type Database, open, type RootDatabase, type Transaction } from "lmdb"
import { Source } from "../core/bytes.js"
import { BlockOutOfRangeError, StoreCorruptionError, StoreError } from "./errors.js"
import {
  ADDRESS_BYTES,
  type Address,
  BLOCK_NUMBER_BYTES,
  decodeValue,
  encodeValue,
  KEY_BYTES,
  readU64,
  type StorageKey,
  writeU64
} from "./keys.js"

export { Source } from "../core/bytes.js"
/**
 * A read served by a cache in front of the store: the value is right but where the store would have found
 * it is unknown (a hint recorder then asks the store, see HintRecorder's annotate).
 */
export const SOURCE_UNKNOWN = 255
export type ReadSource = Source | typeof SOURCE_UNKNOWN
export const SOURCE_NAMES: Readonly<Record<Source, string>> = { 0: "plain", 1: "zero", 2: "changeset" }

export interface StoreOptions {
  /** The data file (LMDB without a subdirectory: `<path>` and `<path>-lock`). */
  readonly path: string
  readonly readOnly?: boolean
  /**
   * Flush every commit to disk (default). Scratch databases (benchmarks, tests) turn it off: their
   * durability does not matter and the build is I/O-bound otherwise.
   */
  readonly durable?: boolean
  /** Address space reserved for the map (the file grows into it); default 64 GiB. */
  readonly mapSizeBytes?: number
}

/** Read options lmdb-js accepts but its typings omit on some methods. */
interface ReadOptions {
  readonly transaction?: Transaction
}

/** An LMDB table of binary keys and values, with the read signatures lmdb-js implements. */
export type Table = Omit<Database<Buffer, Buffer>, "getBinaryFast" | "getBinary"> & {
  getBinaryFast(key: Buffer, options?: ReadOptions): Buffer | undefined
  getBinary(key: Buffer, options?: ReadOptions): Buffer | undefined
}

export interface StoreTables {
  readonly path: string
  readonly env: RootDatabase<Buffer, Buffer>
  readonly plain: Table
  readonly changesets: Table
  readonly history: Table
  readonly code: Table
  readonly meta: Table
  /** A primary's published blocks and hints by block number (to publish them again after a restart). */
  readonly blocks: Table
  readonly hints: Table
}

const HEAD_KEY = Buffer.from("head")
const GENESIS_KEY = Buffer.from("genesis")
const EMPTY = Buffer.alloc(0)
const DEFAULT_MAP_SIZE = 64 * 2 ** 30

/**
 * Opens the environment and its tables. Every thread that reads opens its own handle (lmdb-js shares the
 * environment and its map within a process). Readahead is off: a cold page fault then reads one page, not
 * the device's readahead window, which is what random B-tree reads want on a database larger than the
 * hot set (and the same for the baseline and the backup).
 */
export const openTables = (options: StoreOptions): StoreTables => {
  try {
    const env = open<Buffer, Buffer>({
      path: options.path,
      maxDbs: 8,
      mapSize: options.mapSizeBytes ?? DEFAULT_MAP_SIZE,
      // lmdb-js implements noReadAhead (MDB_NORDAHEAD) but its typings omit it.
      ...({ noReadAhead: true } as object),
      readOnly: options.readOnly ?? false,
      noSync: options.durable === false,
      noMemInit: true,
      encoding: "binary",
      keyEncoding: "binary",
      cache: false,
      compression: false
    })
    const table = (name: string): Table =>
      env.openDB<Buffer, Buffer>({
        name,
        encoding: "binary",
        keyEncoding: "binary",
        cache: false,
        compression: false
      }) as unknown as Table
    return {
      path: options.path,
      env,
      plain: table("plain"),
      changesets: table("changesets"),
      history: table("history"),
      code: table("code"),
      meta: table("meta"),
      blocks: table("blocks"),
      hints: table("hints")
    }
  } catch (cause) {
    throw new StoreError({ operation: "open", path: options.path, cause })
  }
}

const copyKey = (from: Uint8Array, offset: number, to: Buffer): void => {
  for (let i = 0; i < KEY_BYTES; i++) to[i] = from[offset + i]!
}

/** The head block recorded in `meta` (0 before any block: the genesis state). */
export const readHead = (tables: StoreTables, txn?: Transaction): number => {
  const bytes = tables.meta.getBinaryFast(HEAD_KEY, txn === undefined ? undefined : { transaction: txn })
  return bytes === undefined ? 0 : readU64(bytes, 0)
}

/**
 * The two-step lookup over one snapshot (a read transaction, or the thread's current one). One reader per
 * thread: it reuses key buffers, so it is not re-entrant.
 */
export class StateReader {
  /** Where the last `storage`/`storageAt` read found its value. */
  lastSource: Source = Source.Zero
  /** Bytes of values and history entries the reads returned (a trace attribute, not I/O volume). */
  bytesRead = 0
  private readonly options: { readonly transaction: Transaction } | undefined
  private readonly seek = Buffer.alloc(KEY_BYTES + BLOCK_NUMBER_BYTES)
  /** The key part of `seek` (views made once: reads are the hot path). */
  private readonly seekKey = this.seek.subarray(0, KEY_BYTES)
  private readonly seekEnd = Buffer.alloc(KEY_BYTES + BLOCK_NUMBER_BYTES)
  private readonly changeKey = Buffer.alloc(BLOCK_NUMBER_BYTES + KEY_BYTES)
  private readonly historyRange: { start: Buffer; end: Buffer; limit: number; transaction?: Transaction }

  constructor(
    private readonly tables: StoreTables,
    txn?: Transaction
  ) {
    this.options = txn === undefined ? undefined : { transaction: txn }
    this.historyRange = {
      start: this.seek,
      end: this.seekEnd,
      limit: 1,
      ...(txn === undefined ? {} : { transaction: txn })
    }
  }

  head(): number {
    return readHead(this.tables, this.options?.transaction)
  }

  /** The value of `key` at the end of block `asOf`, on a snapshot whose head is `head`. */
  storage(key: StorageKey, asOf: number, head: number): number {
    this.seek.write(key, 0, KEY_BYTES, "latin1")
    return this.lookup(asOf, head)
  }

  /** As `storage`, for a key given as bytes (readers get keys as bytes from a hint). */
  storageAt(bytes: Uint8Array, offset: number, asOf: number, head: number): number {
    copyKey(bytes, offset, this.seek)
    return this.lookup(asOf, head)
  }

  /** PlainState only: for keys whose hint says no later block changed them (one seek, no history step). */
  plainAt(bytes: Uint8Array, offset: number): number {
    copyKey(bytes, offset, this.seek)
    return this.readPlain()
  }

  /**
   * The cheapest source of `key` as of `asOf` when its value there is already known (a cache had it): only
   * the history step is needed, the value says whether PlainState holds it.
   */
  sourceOf(key: StorageKey, asOf: number, head: number, value: number): Source {
    if (asOf < head) {
      this.seek.write(key, 0, KEY_BYTES, "latin1")
      if (this.firstChangeAfter(asOf) !== undefined) return Source.Changeset
    }
    return value === 0 ? Source.Zero : Source.Plain
  }

  code(address: Address): Buffer | undefined {
    const code = this.tables.code.getBinary(Buffer.from(address, "latin1"), this.options)
    if (code !== undefined) this.bytesRead += code.length
    return code
  }

  private lookup(asOf: number, head: number): number {
    // After the head is legal: a follower prefetches blocks it has not committed yet, and the writes of the
    // blocks in between come from its overlay. Before genesis is not.
    if (asOf < 0) throw new BlockOutOfRangeError({ asOf, head })
    // Step 1: the first block after asOf that changed the key. No block after the head exists, so a read
    // as of the head (a primary or a follower at the tip) skips the history index.
    if (asOf < head) {
      const changedAt = this.firstChangeAfter(asOf)
      if (changedAt !== undefined) {
        // Step 2: that block's change set holds the value the key had before it, i.e. as of asOf.
        this.changeKey.set(this.seekKey, BLOCK_NUMBER_BYTES)
        writeU64(this.changeKey, 0, changedAt)
        const before = this.tables.changesets.getBinaryFast(this.changeKey, this.options)
        if (before === undefined) {
          throw new StoreCorruptionError({ what: "changesets", detail: `history names block ${changedAt}, no entry` })
        }
        this.lastSource = Source.Changeset
        this.bytesRead += before.length + KEY_BYTES + BLOCK_NUMBER_BYTES
        return decodeValue(before)
      }
    }
    return this.readPlain()
  }

  private readPlain(): number {
    const value = this.tables.plain.getBinaryFast(this.seekKey, this.options)
    if (value === undefined) {
      this.lastSource = Source.Zero
      return 0
    }
    this.lastSource = Source.Plain
    this.bytesRead += value.length
    return decodeValue(value)
  }

  private firstChangeAfter(asOf: number): number | undefined {
    writeU64(this.seek, KEY_BYTES, asOf + 1)
    this.seekEnd.set(this.seekKey, 0)
    this.seekEnd.fill(0xff, KEY_BYTES)
    for (const entry of this.tables.history.getKeys(this.historyRange)) {
      this.bytesRead += KEY_BYTES + BLOCK_NUMBER_BYTES
      return readU64(entry as Buffer, KEY_BYTES)
    }
    return undefined
  }
}

/** One key a block changed: its value before the block and after it (never equal). */
export interface StorageChange {
  readonly key: StorageKey
  readonly before: number
  readonly after: number
}

/**
 * Queues a block's changes for one asynchronous LMDB transaction: PlainState, the block's change set, the
 * history index, and the new head. Blocks must be committed in order (the head check makes a skipped or
 * repeated block an error, not a silent gap).
 */
export const commitBlock = (
  tables: StoreTables,
  block: number,
  changes: ReadonlyArray<StorageChange>,
  head: number = readHead(tables),
  /** The block's wire record and hint, kept in the same transaction (a primary's). */
  records?: { readonly block: Uint8Array; readonly hint: Uint8Array }
): Promise<boolean> => {
  if (block !== head + 1) {
    return Promise.reject(
      new StoreError({ operation: `commit block ${block}`, path: tables.path, cause: `head is ${head}` })
    )
  }
  return tables.env.batch(() => {
    writeChanges(tables, block, changes, false)
    if (records !== undefined) {
      const key = Buffer.allocUnsafe(BLOCK_NUMBER_BYTES)
      writeU64(key, 0, block)
      tables.blocks.put(key, Buffer.from(records.block))
      tables.hints.put(key, Buffer.from(records.hint))
    }
  })
}

/** A primary's stored record of block `block` and its hint, if it kept them. */
export const readBlockRecord = (
  tables: StoreTables,
  block: number
): { readonly block: Buffer; readonly hint: Buffer | undefined } | undefined => {
  const key = Buffer.allocUnsafe(BLOCK_NUMBER_BYTES)
  writeU64(key, 0, block)
  const record = tables.blocks.getBinary(key)
  return record === undefined ? undefined : { block: record, hint: tables.hints.getBinary(key) }
}

/** As `commitBlock`, synchronously, inside the caller's `transactionSync` (bulk builds). */
export const commitBlockInTransaction = (
  tables: StoreTables,
  block: number,
  changes: ReadonlyArray<StorageChange>
): void => writeChanges(tables, block, changes, true)

const writeChanges = (tables: StoreTables, block: number, changes: ReadonlyArray<StorageChange>, sync: boolean) => {
  for (const change of changes) {
    const key = Buffer.from(change.key, "latin1")
    const changeKey = Buffer.allocUnsafe(BLOCK_NUMBER_BYTES + KEY_BYTES)
    writeU64(changeKey, 0, block)
    key.copy(changeKey, BLOCK_NUMBER_BYTES)
    const historyKey = Buffer.allocUnsafe(KEY_BYTES + BLOCK_NUMBER_BYTES)
    key.copy(historyKey, 0)
    writeU64(historyKey, KEY_BYTES, block)
    if (sync) {
      if (change.after === 0) tables.plain.removeSync(key)
      else tables.plain.putSync(key, encodeValue(change.after))
      tables.changesets.putSync(changeKey, encodeValue(change.before))
      tables.history.putSync(historyKey, EMPTY)
    } else {
      if (change.after === 0) tables.plain.remove(key)
      else tables.plain.put(key, encodeValue(change.after))
      tables.changesets.put(changeKey, encodeValue(change.before))
      tables.history.put(historyKey, EMPTY)
    }
  }
  const head = Buffer.allocUnsafe(8)
  writeU64(head, 0, block)
  if (sync) tables.meta.putSync(HEAD_KEY, head)
  else tables.meta.put(HEAD_KEY, head)
}

/** The genesis description the store was built from (opaque to the store), if any. */
export const readGenesis = (tables: StoreTables): Buffer | undefined => tables.meta.getBinary(GENESIS_KEY)

export const writeGenesisSync = (tables: StoreTables, genesis: Uint8Array): void =>
  tables.meta.putSync(GENESIS_KEY, Buffer.from(genesis))

export const putCodeSync = (tables: StoreTables, address: Address, code: Uint8Array): void => {
  if (address.length !== ADDRESS_BYTES) throw new StoreCorruptionError({ what: "address", detail: "not 20 bytes" })
  tables.code.putSync(Buffer.from(address, "latin1"), Buffer.from(code))
}

/** A genesis entry: its key, its value, and (for a key with pre-history) its value before block 0. */
export type GenesisEntry = readonly [key: Buffer, value: number, before: number | undefined]

/**
 * Appends genesis storage in key order (LMDB's append mode packs pages full, as a bulk load should).
 * `entries` must be strictly increasing and may not repeat keys already loaded. An entry with a `before`
 * value also gets block 0 in its history and change set: the chain's pre-history, so that the history index
 * has the size of an archive's (it covers the whole chain, not only the blocks executed here).
 */
export const appendGenesisSorted = (
  tables: StoreTables,
  entries: Iterable<GenesisEntry>,
  entriesPerTransaction = 200_000
): { readonly storage: number; readonly history: number } => {
  let storage = 0
  let history = 0
  const iterator = entries[Symbol.iterator]()
  const historyKey = Buffer.alloc(KEY_BYTES + BLOCK_NUMBER_BYTES)
  const changeKey = Buffer.alloc(BLOCK_NUMBER_BYTES + KEY_BYTES)
  let done = false
  while (!done) {
    tables.env.transactionSync(() => {
      for (let i = 0; i < entriesPerTransaction; i++) {
        const next = iterator.next()
        if (next.done) {
          done = true
          return
        }
        const [key, value, before] = next.value
        if (value !== 0) {
          tables.plain.putSync(key, encodeValue(value), { append: true })
          storage++
        }
        if (before !== undefined) {
          key.copy(historyKey, 0)
          key.copy(changeKey, BLOCK_NUMBER_BYTES)
          tables.history.putSync(historyKey, EMPTY, { append: true })
          tables.changesets.putSync(changeKey, encodeValue(before), { append: true })
          history++
        }
      }
    })
  }
  return { storage, history }
}
