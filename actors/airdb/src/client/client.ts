/**
 * The AirDB client (§4.4): an embedded database whose whole state is on shared storage. Each client keeps
 * the command log's tail applied in memory (CommandReplay), the indexes of the live snapshots and a bounded
 * block cache, and takes part in materialisation. Three fibers do the I/O:
 *
 *   - the bus stand: one outstanding tail check at a time, at least `minSyncGapMs` apart; reads and
 *     transaction begins wait for the next bus, whose tail is their linearisation point (snapshot s(T));
 *   - the writer: batches intentions into one command entry per append, conditional on the tail;
 *   - the snapshotter: keeps the timely-snapshot invariant (begin-snapshot, blocks, index, chain record) and
 *     merges snapshots (recursive compaction).
 *
 * What the client has materialised (tail, state-log view, adopted chain) and the read path's decisions live
 * in the pure ClientState (src/core/client-state.ts); outcomes, chains and plans come from the other cores in
 * src/core. The simulator's broken clients are variants of those decisions, never switches in this file.
 */
import { randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import { utf8Length } from "../core/blocks.js"
import { type Chain, chainEnd, extendChain, type LogLocation, mergeIntoChain } from "../core/chain.js"
import { ClientState, type CoreVariant, type ReadStep } from "../core/client-state.js"
import {
  confirmBegin,
  planExtension,
  planMerge,
  type StateRecord,
  type StateView,
  type StoreConfig
} from "../core/coordination.js"
import { compareKeys } from "../core/partial-state.js"
import type { CommandReplay } from "../core/replay.js"
import {
  type CommandEntry,
  checkedKeys,
  type Intention,
  type Key,
  type KeyState,
  type Outcome,
  type Write
} from "../core/types.js"
import {
  CorruptRecord,
  decodeCommandEntry,
  decodeStateRecord,
  ENTRY_OVERHEAD_BYTES,
  encodeCommandEntry,
  encodeStateRecord,
  intentionBytes
} from "../log/record-codec.js"
import { type LogCursor, type LogError, locationOf, SharedLog } from "../log/shared-log.js"
import type { SegmentStoreShape } from "../segment/segment.js"
import {
  type AirDbError,
  AirDbInvalidArgument,
  ClientClosed,
  StorageUnavailable,
  StoreCorrupt,
  StoreIncompatible,
  TransactionAborted,
  TransactionTooLarge
} from "./errors.js"
import { type AirDbOptions, FORMAT_VERSION, type ResolvedOptions, resolveOptions } from "./options.js"
import { MISS, mergeSnapshots, SnapshotBuilder, type SnapshotReadError, SnapshotReader } from "./snapshots.js"
import { AirDbTelemetry } from "./telemetry.js"
import { traced } from "./tracing.js"

export interface ReadResult {
  readonly value: Uint8Array | undefined
  /** The snapshot the read saw: command-log entries before it. */
  readonly snapshot: number
}

export interface ScanResult {
  readonly items: ReadonlyArray<readonly [Key, Uint8Array]>
  readonly snapshot: number
  readonly more: boolean
}

/** A transaction in progress: reads see its snapshot and its own writes; writes are buffered until commit. */
export interface Tx {
  readonly get: (key: Key) => Effect.Effect<Uint8Array | undefined, AirDbError | SnapshotMoved>
  readonly put: (key: Key, value: Uint8Array) => Effect.Effect<void, AirDbInvalidArgument>
  readonly delete: (key: Key) => Effect.Effect<void, AirDbInvalidArgument>
}

export interface TxResult<A> {
  readonly value: A
  /** Commit timestamp; undefined for a read-only transaction (it needed no append). */
  readonly commitTs: number | undefined
  readonly snapshot: number
  readonly attempts: number
}

/**
 * A read found a key modified after the transaction's snapshot (the client moved on while the transaction
 * ran): the transaction restarts from a newer snapshot.
 */
export class SnapshotMoved {
  readonly _tag = "SnapshotMoved"
}

export interface ClientStats {
  readonly entries: number
  readonly chainEnd: number
  readonly tailKeys: number
  readonly syncs: number
  readonly appends: number
  readonly appendConflicts: number
  readonly committed: number
  readonly aborted: number
  readonly snapshotsCreated: number
  readonly mergesCreated: number
  readonly blockReads: number
  readonly cacheHits: number
  readonly cacheMisses: number
  readonly cacheBytes: number
  readonly indexBytes: number
  readonly coldStartMs: number
  readonly waitsOnInvariant: number
}

export interface AirDbClient {
  readonly id: string
  readonly config: StoreConfig
  readonly get: (key: Key) => Effect.Effect<ReadResult, AirDbError>
  readonly put: (key: Key, value: Uint8Array) => Effect.Effect<number, AirDbError>
  readonly delete: (key: Key) => Effect.Effect<number, AirDbError>
  readonly scan: (start: Key, end?: Key, limit?: number) => Effect.Effect<ScanResult, AirDbError>
  readonly transact: <A, E>(
    fn: (tx: Tx) => Effect.Effect<A, E | SnapshotMoved>,
    options?: { readonly maxAttempts?: number }
  ) => Effect.Effect<TxResult<A>, E | AirDbError>
  /** Rides the next bus: the command log's tail as of a check made after this call. */
  readonly sync: Effect.Effect<number, AirDbError>
  readonly stats: () => ClientStats
  /** The whole state and the log position it is the state after (tests and the simulator; reads every block). */
  readonly dump: Effect.Effect<{ readonly snapshot: number; readonly state: ReadonlyMap<Key, Uint8Array> }, AirDbError>
}

/** What the simulator plugs into a client: a variant of the core's decisions, and a view of what it submits. */
export interface ClientHooks {
  /** The core's decisions (the simulator's deliberately broken variants; production: the standard ones). */
  readonly variant?: CoreVariant
  /** Called with each intention a transaction submits (the simulator maps attempts to its history). */
  readonly onSubmit?: (intention: Intention) => void
}

interface PendingIntention {
  readonly intention: Intention
  readonly bytes: number
  /** Resumes the submitting transaction with its outcome. */
  readonly done: (result: Effect.Effect<Outcome, AirDbError>) => void
}

const AIRDB_ERRORS = new Set([
  "AirDbInvalidArgument",
  "TransactionTooLarge",
  "TransactionAborted",
  "StorageUnavailable",
  "StoreCorrupt",
  "StoreIncompatible",
  "ClientClosed"
])

/** A storage or log failure as the client reports it (AirDB's own errors pass through). */
const asAirDbError = (
  operation: string,
  e: { readonly _tag: string; readonly message: string },
  outcomeUnknown = false
): AirDbError => {
  if (AIRDB_ERRORS.has(e._tag)) return e as AirDbError
  if (e._tag === "CorruptRecord" || e._tag === "LogStructureError" || e._tag === "SegmentCorrupt") {
    return new StoreCorrupt({ reason: e.message })
  }
  return new StorageUnavailable({ operation, reason: e.message, outcomeUnknown })
}

const toStorageError =
  (operation: string, outcomeUnknown = false) =>
  (e: { readonly _tag: string; readonly message: string }): AirDbError =>
    asAirDbError(operation, e, outcomeUnknown)

/** Command entries one read of a tail sync asks for. */
const SYNC_READ_RECORDS = 256

const isWellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed()

class Client {
  readonly id: string
  config: StoreConfig
  cmdLog: SharedLog
  stateLog: SharedLog
  readonly reader: SnapshotReader

  /** What this client has materialised and the decisions about it (the pure core). */
  readonly state: ClientState
  // The command log as applied: state.next entries, the next at `cursor`.
  cursor!: LogCursor
  readonly applyLock = Effect.unsafeMakeSemaphore(1)

  // The state log as applied up to `stateCursor`.
  stateCursor!: LogCursor
  readonly stateLock = Effect.unsafeMakeSemaphore(1)

  // Bus stand.
  /** Riders waiting for the next bus: each is resumed with the tail it checked (a callback, not a fiber). */
  riders: Array<(result: Effect.Effect<number, AirDbError>) => void> = []
  readonly busBell = Effect.runSync(Queue.sliding<void>(1))
  lastBusMs = 0

  // Writer.
  pending: Array<PendingIntention> = []
  readonly writerBell = Effect.runSync(Queue.sliding<void>(1))
  batchSeq = 0
  txSeq = 0
  readonly ownBatches = new Map<number, ReadonlyArray<Outcome>>()

  // Snapshotter.
  readonly snapshotBell = Effect.runSync(Queue.sliding<void>(1))
  readonly mergeBell = Effect.runSync(Queue.sliding<void>(1))
  merging = false
  readonly chainChanged = Effect.runSync(Queue.sliding<void>(1))

  readonly telemetry: AirDbTelemetry
  /** Index of the last command entry this client appended (-1: none yet). */
  lastOwnEntry = -1
  /** A batch of this client's waits at the timely bound (its writer takes on the snapshot, whoever wrote the tail). */
  admitting = false
  fatal: StoreCorrupt | undefined
  closed = false
  readonly counters = {
    syncs: 0,
    appends: 0,
    appendConflicts: 0,
    committed: 0,
    aborted: 0,
    snapshotsCreated: 0,
    mergesCreated: 0,
    coldStartMs: 0,
    waitsOnInvariant: 0
  }

  constructor(
    readonly store: SegmentStoreShape,
    readonly options: ResolvedOptions,
    readonly hooks: ClientHooks = {}
  ) {
    this.id = options.clientId
    this.state = new ClientState(hooks.variant)
    this.config = options.create
    this.reader = new SnapshotReader(store, options.cacheBytes)
    this.telemetry = new AirDbTelemetry(options.store)
    this.cmdLog = this.makeCommandLog(this.config)
    this.stateLog = this.makeStateLog(this.config)
  }

  get replay(): CommandReplay {
    return this.state.replay
  }

  get view(): StateView {
    return this.state.view
  }

  /** The chain whose snapshots reads use (its end is the replay's base). */
  get adopted(): Chain {
    return this.state.adopted
  }

  private makeCommandLog(config: StoreConfig): SharedLog {
    return new SharedLog({
      store: this.store,
      prefix: `${this.options.store}-c`,
      segmentRecords: config.layout.commandSegmentRecords,
      metaRecords: config.layout.metaSegmentRecords
    })
  }

  private makeStateLog(config: StoreConfig): SharedLog {
    return new SharedLog({
      store: this.store,
      prefix: `${this.options.store}-s`,
      segmentRecords: config.layout.stateSegmentRecords,
      metaRecords: config.layout.metaSegmentRecords,
      // A new state segment starts with the store's config (the first) or the current chain (a checkpoint),
      // so a cold start reads the first record of the log and its last segment only.
      firstRecords: (firstIndex) => [
        encodeStateRecord(
          firstIndex === 0
            ? { _tag: "Config", index: 0, config: this.config }
            : { _tag: "Chain", index: firstIndex, chain: this.view.chain, owner: this.id }
        )
      ]
    })
  }

  get failed(): AirDbError | undefined {
    return this.closed ? new ClientClosed() : this.fatal
  }

  // ---- opening: the cold start (§5.3.3: "It read only the state log indexes and applied the command log tail")

  open(): Effect.Effect<void, AirDbError> {
    const self = this
    const body = Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      yield* self.stateLog.ensureCreated().pipe(Effect.mapError(toStorageError("create store")))
      const first = yield* self.store
        .read(self.stateLog.segments[0]!.segment, 0, { maxRecords: 1 })
        .pipe(Effect.mapError(toStorageError("read store config")))
      const record = first[0] === undefined ? undefined : decodeStateRecord(first[0].bytes, "state", 0)
      if (record === undefined || record instanceof CorruptRecord || record._tag !== "Config") {
        return yield* new StoreCorrupt({ reason: "the state log does not start with the store's config" })
      }
      if (record.config.formatVersion !== FORMAT_VERSION) {
        return yield* new StoreIncompatible({
          reason: `store format ${record.config.formatVersion}; this client reads format ${FORMAT_VERSION}`
        })
      }
      self.config = record.config
      self.cmdLog = self.makeCommandLog(self.config)
      self.stateLog = self.makeStateLog(self.config)
      yield* self.stateLog.refreshMeta().pipe(Effect.mapError(toStorageError("read state meta")))
      yield* self.cmdLog.ensureCreated().pipe(Effect.mapError(toStorageError("create command log")))

      yield* traced("airdb.cold-start.index-load", {}, (span) =>
        Effect.gen(function* () {
          self.stateCursor = self.stateLog.lastSegmentCursor()
          self.state.resetView(self.config, self.stateCursor.index)
          yield* self.syncStateLogUnlocked()
          const chain = self.view.chain
          yield* self.reader.ensureIndexes(chain.snapshots).pipe(Effect.mapError(toStorageError("load indexes")))
          self.state.start(self.config, chain)
          span?.attribute("snapshots", chain.snapshots.length)
          span?.attribute("index.bytes", self.reader.indexBytes())
          span?.attribute("chain.end", chainEnd(chain))
        })
      )
      yield* traced("airdb.cold-start.tail-replay", {}, (span) =>
        Effect.gen(function* () {
          const chain = self.adopted
          self.cursor = yield* (
            chain.snapshots.length === 0
              ? Effect.succeed(self.cmdLog.startCursor())
              : self.cmdLog.cursorAt(chain.replayFrom)
          ).pipe(Effect.mapError(toStorageError("locate replay start")))
          const n = yield* self.syncCommandLog()
          span?.attribute("entries", n - chain.replayFrom.index)
          span?.attribute("tail.keys", self.replay.tailSize)
        })
      )
      if (self.options.eager) yield* self.loadEverything()
      self.counters.coldStartMs = (yield* Clock.currentTimeMillis) - started
      self.telemetry.onColdStart(self.counters.coldStartMs)
    })
    return traced("airdb.cold-start", { store: this.options.store, client: this.id }, () => body)
  }

  /** SLSMR's start: every block of every live snapshot into memory (a full state download). */
  private loadEverything(): Effect.Effect<void, AirDbError> {
    return Effect.forEach(this.adopted.snapshots, (s) => Effect.asVoid(this.reader.scanSnapshot(s, "", undefined)), {
      discard: true
    }).pipe(Effect.mapError(toStorageError("load snapshots")))
  }

  // ---- the command log ---------------------------------------------------------------------------------------

  /** Reads and applies what the command log has beyond this client's tail; returns the entries applied. */
  syncCommandLog(): Effect.Effect<number, AirDbError> {
    return this.applyLock.withPermits(1)(
      Effect.suspend(() => {
        const failed = this.failed
        return failed === undefined ? this.syncCommandLogUnlocked() : Effect.fail(failed)
      })
    )
  }

  private syncCommandLogUnlocked(): Effect.Effect<number, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      self.counters.syncs++
      self.telemetry.onSync()
      // The tail check: what was appended before it is read now; what comes after may be. A store that
      // numbers its records reads up to its tail in the read itself (a read returns fewer records than asked
      // only at the tail as it was then): the reads are the check, one storage call when nothing is new. A
      // store addressed by bytes (Azure) is asked for its size first.
      const tail = self.store.limits.byteAddressed ? yield* self.cmdLog.size(self.cursor) : undefined
      const checked = self.cursor.segment
      for (;;) {
        const c = self.cursor
        const bound = tail !== undefined && c.segment === checked ? tail : undefined
        if (bound !== undefined && c.position >= bound && !self.cmdLog.isSealed(c)) break
        const got = yield* self.cmdLog.read(c, SYNC_READ_RECORDS, bound)
        if (got.records.length === 0) {
          // The read may have crossed into a new (empty) segment: the tail is there now.
          self.cursor = got.cursor
          break
        }
        const entries: Array<CommandEntry> = []
        for (const r of got.records) {
          const entry = decodeCommandEntry(r.bytes, r.segment, r.location.position)
          if (entry instanceof CorruptRecord) return yield* entry
          if (entry.index !== r.index) {
            return yield* new CorruptRecord({
              segment: r.segment,
              position: r.location.position,
              reason: `entry says index ${entry.index}, its place in the log is ${r.index}`
            })
          }
          entries.push(entry)
        }
        const history = yield* self.historyFor(entries)
        for (const [i, entry] of entries.entries()) self.applyEntry(entry, got.records[i]!.location, history)
        self.cursor = got.cursor
        // Fewer than asked: the read reached the tail (what writers append meanwhile is the next bus's).
        if (tail === undefined && got.records.length < SYNC_READ_RECORDS && !self.cmdLog.isSealed(self.cursor)) break
      }
      if (self.options.snapshots && self.state.snapshotDue(self.config.timely)) {
        yield* Queue.offer(self.snapshotBell, undefined)
      }
      return self.replay.next
    }).pipe(
      Effect.mapError((e) => {
        const error = asAirDbError("sync", e)
        if (error._tag === "StoreCorrupt") self.fatal = error
        return error
      })
    )
  }

  /**
   * The last modifications, from the snapshots, of keys that intentions with a snapshot older than this
   * client's first replayed entry check (a client that started cold has no window before it).
   */
  private historyFor(
    entries: ReadonlyArray<CommandEntry>
  ): Effect.Effect<ReadonlyMap<Key, number | undefined> | undefined, AirDbError> {
    const keys = this.replay.historyNeeded(entries)
    if (keys.length === 0) return Effect.succeed(undefined)
    return Effect.map(
      Effect.forEach(keys, (k) => Effect.map(this.lookupSnapshots(k, false), (r) => [k, r.state?.modified] as const), {
        concurrency: 8
      }),
      (pairs) => new Map(pairs)
    )
  }

  /** Applies one entry at the tail (under applyLock); records the outcomes of own batches. */
  private applyEntry(
    entry: CommandEntry,
    _location: LogLocation,
    history?: ReadonlyMap<Key, number | undefined>
  ): void {
    const outcomes = this.state.applyEntry(entry, history)
    this.telemetry.onEntry()
    for (const o of outcomes) {
      if (o._tag === "Committed") this.counters.committed++
      else this.counters.aborted++
    }
    if (entry.writer === this.id) {
      this.lastOwnEntry = entry.index
      this.ownBatches.set(entry.batch, outcomes)
      for (const o of outcomes) {
        this.telemetry.onOwnOutcome(o._tag === "Committed")
        if (o._tag === "Aborted") this.telemetry.onAbort(o.reason)
      }
    }
  }

  // ---- the bus stand -----------------------------------------------------------------------------------------

  /** Waits for the next bus to leave and return: the tail it checked is after this call began. */
  readonly ride: Effect.Effect<number, AirDbError> = Effect.async<number, AirDbError>((resume) => {
    const failed = this.failed
    if (failed !== undefined) return resume(Effect.fail(failed))
    this.riders.push(resume)
    // The first rider since the last departure rings the bell; the others board the same bus.
    if (this.riders.length === 1) Queue.unsafeOffer(this.busBell, undefined)
  })

  readonly busLoop: Effect.Effect<never> = Effect.gen(this, function* () {
    for (;;) {
      yield* Queue.take(this.busBell)
      if (this.riders.length === 0) continue
      const now = yield* Clock.currentTimeMillis
      const wait = this.lastBusMs + this.options.minSyncGapMs - now
      if (wait > 0) yield* Effect.sleep(wait)
      const riders = this.riders
      this.riders = []
      this.lastBusMs = yield* Clock.currentTimeMillis
      const result = yield* Effect.either(
        traced("airdb.tail-sync", { riders: riders.length }, (span) =>
          Effect.tap(this.syncCommandLog(), (n) => span?.attribute("entries", n))
        )
      )
      this.telemetry.onTailSync(
        (yield* Clock.currentTimeMillis) - this.lastBusMs,
        this.replay.next - chainEnd(this.view.chain)
      )
      // One result shared by every rider of this bus.
      const arrival: Effect.Effect<number, AirDbError> = Either.isRight(result)
        ? Effect.succeed(result.right)
        : Effect.fail(result.left)
      for (const resume of riders) resume(arrival)
      if (this.riders.length > 0) yield* Queue.offer(this.busBell, undefined)
    }
  })

  // ---- the writer --------------------------------------------------------------------------------------------

  submit(intention: Intention): Effect.Effect<Outcome, AirDbError> {
    return Effect.async<Outcome, AirDbError>((done) => {
      const failed = this.failed
      if (failed !== undefined) return done(Effect.fail(failed))
      const bytes = intentionBytes(intention)
      const limit = this.store.limits.maxAppendBytes - ENTRY_OVERHEAD_BYTES
      if (bytes > limit) return done(Effect.fail(new TransactionTooLarge({ bytes, limitBytes: limit })))
      this.pending.push({ intention, bytes, done })
      if (this.pending.length === 1) Queue.unsafeOffer(this.writerBell, undefined)
    })
  }

  readonly writerLoop: Effect.Effect<never> = Effect.gen(this, function* () {
    for (;;) {
      yield* Queue.take(this.writerBell)
      while (this.pending.length > 0) {
        const batch = this.takeBatch()
        const result = yield* Effect.either(this.commitBatch(batch))
        if (Either.isLeft(result)) {
          const failure = Effect.fail(result.left)
          for (const p of batch) p.done(failure)
        } else {
          for (const [slot, p] of batch.entries()) p.done(Effect.succeed(result.right[slot]!))
        }
      }
    }
  })

  private takeBatch(): Array<PendingIntention> {
    const budget = this.store.limits.maxAppendBytes - ENTRY_OVERHEAD_BYTES
    let bytes = 0
    let n = 0
    while (n < this.pending.length && n < this.options.maxBatchIntentions) {
      const next = this.pending[n]!.bytes
      if (n > 0 && bytes + next > budget) break
      bytes += next
      n++
    }
    return this.pending.splice(0, n)
  }

  /** Appends one entry of intentions at the tail, however many conflicts it takes; returns their outcomes. */
  private commitBatch(batch: ReadonlyArray<PendingIntention>): Effect.Effect<ReadonlyArray<Outcome>, AirDbError> {
    const self = this
    const seq = ++self.batchSeq
    let attempted = false
    return Effect.gen(function* () {
      for (let attempt = 0; ; attempt++) {
        yield* self.awaitAdmission()
        const landed = self.ownBatches.get(seq)
        if (landed !== undefined) {
          self.ownBatches.delete(seq)
          return landed
        }
        const cursor = self.cursor
        const index = self.replay.next
        const entry: CommandEntry = { index, writer: self.id, batch: seq, intentions: batch.map((p) => p.intention) }
        const bytes = encodeCommandEntry(entry)
        self.counters.appends++
        attempted = true
        const appended = yield* Effect.either(
          traced("airdb.append", { entry: index, intentions: batch.length, bytes: bytes.byteLength }, () =>
            self.cmdLog.append(cursor, bytes)
          )
        )
        if (Either.isRight(appended)) {
          yield* self.applyLock.withPermits(1)(
            Effect.sync(() => {
              if (
                self.replay.next === index &&
                self.cursor === cursor &&
                self.replay.historyNeeded([entry]).length === 0
              ) {
                self.applyEntry(entry, locationOf(cursor))
                self.cursor = appended.right
                // §3.3: at n − i_k ≥ B a snapshot starts now (a client that only writes rides no bus to notice).
                if (self.options.snapshots && self.state.snapshotDue(self.config.timely)) {
                  Queue.unsafeOffer(self.snapshotBell, undefined)
                }
              }
            })
          )
          // Applied here or by a sync that read it first: either way its outcomes are known now.
          yield* self.syncIfBehind(seq)
          const outcomes = self.ownBatches.get(seq)
          if (outcomes !== undefined) {
            self.ownBatches.delete(seq)
            return outcomes
          }
          continue
        }
        const e = appended.left
        if (e._tag === "SegmentConflict") {
          self.counters.appendConflicts++
          self.telemetry.onAppendConflict()
        } else if (e._tag === "SegmentTimeout" || e._tag === "SegmentUnavailable") {
          // The append may have happened: only the log can tell. Sync (retrying) before anything else.
          yield* Effect.sleep(Math.min(1000, 20 * 2 ** Math.min(attempt, 6)))
        } else {
          return yield* toStorageError("append", true)(e)
        }
        yield* self.syncCommandLog().pipe(Effect.retry({ times: 20, while: (x) => x._tag === "StorageUnavailable" }))
      }
    }).pipe(
      // Once an append was sent, a failure leaves its outcome to the log: say so.
      Effect.mapError((x) =>
        attempted && x._tag === "StorageUnavailable" ? new StorageUnavailable({ ...x, outcomeUnknown: true }) : x
      )
    )
  }

  /** After a successful append, makes sure the entry is applied (a concurrent sync may hold the lock). */
  private syncIfBehind(seq: number): Effect.Effect<void, AirDbError> {
    return this.ownBatches.has(seq) ? Effect.void : Effect.asVoid(this.syncCommandLog())
  }

  /** Waits while n − i_k would exceed (1+ε)B: new commands wait until enough is materialised (§3.3). */
  private awaitAdmission(): Effect.Effect<void, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      let waited = false
      while (!self.state.admitsNext(self.config.timely)) {
        if (!waited) self.counters.waitsOnInvariant++
        waited = true
        self.admitting = true
        yield* Queue.offer(self.snapshotBell, undefined)
        yield* Effect.raceFirst(Queue.take(self.chainChanged), Effect.sleep(50))
        yield* self.syncStateLog()
        yield* self.syncCommandLog()
      }
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          self.admitting = false
        })
      )
    )
  }

  // ---- the state log and the snapshotter ---------------------------------------------------------------------

  syncStateLog(): Effect.Effect<void, AirDbError> {
    return this.stateLock.withPermits(1)(this.syncStateLogUnlocked())
  }

  private syncStateLogUnlocked(): Effect.Effect<void, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      for (;;) {
        const got = yield* self.stateLog.read(self.stateCursor, 64)
        if (got.records.length === 0) {
          self.stateCursor = got.cursor
          break
        }
        const now = yield* Clock.currentTimeMillis
        const records: Array<StateRecord> = []
        for (const r of got.records) {
          const record = decodeStateRecord(r.bytes, r.segment, r.location.position)
          if (record instanceof CorruptRecord) return yield* record
          if (record.index !== r.index) {
            return yield* new CorruptRecord({
              segment: r.segment,
              position: r.location.position,
              reason: `state record says index ${record.index}, its place in the log is ${r.index}`
            })
          }
          records.push(record)
        }
        // Applied and the cursor moved in one step (no yield between): an interrupted sync never leaves the
        // view ahead of its cursor.
        const changed = self.state.applyStateRecords(records, now)
        self.stateCursor = got.cursor
        if (changed) Queue.unsafeOffer(self.chainChanged, undefined)
      }
      yield* self.adoptChain()
    }).pipe(
      Effect.mapError(
        (e): AirDbError =>
          e._tag === "StorageUnavailable" || e._tag === "StoreCorrupt"
            ? (e as AirDbError)
            : toStorageError("state sync")(e)
      )
    )
  }

  /** Reads use the newest chain the replay has reached: its snapshots' indexes, the tail rebased at its end. */
  private adoptChain(): Effect.Effect<void, SnapshotReadError | LogError | AirDbError> {
    const chain = this.state.adoptable()
    if (chain === undefined) return Effect.void
    return Effect.flatMap(this.reader.ensureIndexes(chain.snapshots), () =>
      Effect.sync(() => {
        if (this.state.adopt(chain)) this.reader.retain(chain.snapshots)
      })
    )
  }

  readonly snapshotLoop: Effect.Effect<never> = Effect.gen(this, function* () {
    for (;;) {
      yield* Queue.take(this.snapshotBell)
      const r = yield* Effect.either(this.snapshotStep())
      if (Either.isLeft(r)) yield* Effect.logWarning(`airdb snapshotter: ${r.left.message}`)
    }
  })

  /** One look at the state log: create a due snapshot, or a due merge, or schedule a look after a TTL. */
  private snapshotStep(): Effect.Effect<void, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      yield* self.syncStateLog()
      // A chain ahead of the replay is adopted once the replay reaches its end.
      if (chainEnd(self.view.chain) > self.replay.next) yield* self.syncCommandLog()
      yield* self.syncStateLog()
      const now = yield* Clock.currentTimeMillis
      const plan = planExtension(self.view, self.replay.next, now, self.id)
      const duty = self.hasSnapshotDuty()
      if (plan._tag === "Begin" && duty) yield* self.createSnapshot()
      else if (plan._tag === "Wait") yield* self.lookAgainAt(plan.untilMs - now)
      // A merge runs in a fiber of its own: a long one never holds up the next extension, which writers
      // may be waiting for (the timely bound).
      if (duty && !self.merging) yield* Queue.offer(self.mergeBell, undefined)
    })
  }

  /**
   * Snapshot duty falls on the clients whose commands a snapshot would materialise: a client that only reads
   * adopts the chain others publish and never pays for their writes beyond replaying them (isolation,
   * §5.3.2). Writers held at the (1+ε)B bound ring the bell themselves (awaitAdmission), so the invariant
   * never waits on a reader.
   */
  private hasSnapshotDuty(): boolean {
    return this.lastOwnEntry >= chainEnd(this.view.chain) || this.admitting
  }

  /** One merge at a time, beside the extensions. */
  readonly mergeLoop: Effect.Effect<never> = Effect.gen(this, function* () {
    for (;;) {
      yield* Queue.take(this.mergeBell)
      this.merging = true
      const r = yield* Effect.either(
        Effect.gen(this, function* () {
          const now = yield* Clock.currentTimeMillis
          const merge = planMerge(this.view, now, this.id, this.options.mergePolicy)
          if (merge?.plan._tag === "Begin") yield* this.createMerge(merge.parts[0], merge.parts[1])
          else if (merge?.plan._tag === "Wait") yield* this.lookAgainAt(merge.plan.untilMs - now)
        })
      )
      this.merging = false
      if (Either.isLeft(r)) yield* Effect.logWarning(`airdb merger: ${r.left.message}`)
    }
  })

  private lookAgainAt(delayMs: number): Effect.Effect<void> {
    return Effect.asVoid(
      Effect.forkDaemon(Effect.zipRight(Effect.sleep(Math.max(1, delayMs)), Queue.offer(this.snapshotBell, undefined)))
    )
  }

  /**
   * Appends the record `make` builds from the current view at the state log's tail (both under the state
   * lock, so the record is planned against exactly what precedes it). "conflict": the log had grown.
   */
  private appendState(
    make: (view: StateView) => StateRecord | undefined
  ): Effect.Effect<"appended" | "conflict" | "skipped", AirDbError> {
    const self = this
    return self.stateLock
      .withPermits(1)(
        Effect.gen(function* () {
          const record = make(self.view)
          if (record === undefined) return "skipped" as const
          const r = yield* Effect.either(self.stateLog.append(self.stateCursor, encodeStateRecord(record)))
          if (Either.isLeft(r)) {
            if (r.left._tag === "SegmentConflict") return "conflict" as const
            return yield* toStorageError("state append")(r.left)
          }
          return "appended" as const
        })
      )
      .pipe(Effect.tap(() => self.syncStateLog()))
  }

  /** §3.3: begin-snapshot, confirm, materialise Φ(i_k, n], then add it to the chain. */
  private createSnapshot(): Effect.Effect<void, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      // The range and its contents are taken together, from this client's replay (the tail Φ(base, next]).
      if (chainEnd(self.view.chain) !== self.replay.base) return
      // Taken together, in one step: the tail Φ(base, next] and where entry `next` is (a cold start replays from it).
      const partial = self.replay.snapshot()
      const replayFrom = locationOf(self.cursor)
      if (replayFrom.index !== partial.to) return
      const begin = {
        from: partial.from,
        to: partial.to,
        ttlMs: self.config.snapshotTtlMs,
        owner: self.id,
        merge: false
      }
      let beginIndex = -1
      const appended = yield* self.appendState((view) => {
        // Planned against the view it is appended after: the range must still start at the chain's end.
        if (chainEnd(view.chain) !== begin.from) return undefined
        beginIndex = view.next
        return { _tag: "Begin", index: view.next, begin }
      })
      if (appended !== "appended" || !confirmBegin(self.view, beginIndex, yield* Clock.currentTimeMillis)) return
      const ref = yield* traced(
        "airdb.snapshot.create",
        { from: partial.from, to: partial.to, keys: partial.keys.size },
        (span) =>
          Effect.gen(function* () {
            const builder = yield* SnapshotBuilder.create(
              self.store,
              self.options.store,
              self.options.blockBytes,
              (position, entries, bytes) => self.reader.cache.put(`${builder.segment}@${position}`, { entries, bytes })
            )
            const sorted = [...partial.keys].sort(([a], [b]) => compareKeys(a, b))
            for (const [key, state] of sorted) yield* builder.add(key, state)
            const ref = yield* builder.finish(partial.from, partial.to)
            span?.attribute("bytes", ref.bytes)
            span?.attribute("blocks", ref.blocks)
            return ref
          })
      ).pipe(Effect.mapError(toStorageError("write snapshot")))
      const added = yield* self.publishChain(ref.segment, (chain) => extendChain(chain, ref, replayFrom))
      if (added) {
        self.counters.snapshotsCreated++
        self.telemetry.onSnapshot("extend")
      } else yield* Effect.ignore(self.store.remove(ref.segment))
    })
  }

  /** Recursive compaction: Φ(a,b] ⊕ Φ(b,c] written as Φ(a,c], replacing both in the chain. */
  private createMerge(
    older: Chain["snapshots"][number],
    newer: Chain["snapshots"][number]
  ): Effect.Effect<void, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      const begin = { from: older.from, to: newer.to, ttlMs: self.config.snapshotTtlMs, owner: self.id, merge: true }
      let beginIndex = -1
      const appended = yield* self.appendState((view) => {
        if (mergeIntoChain(view.chain, { ...older, to: newer.to }) === undefined) return undefined
        beginIndex = view.next
        return { _tag: "Begin", index: view.next, begin }
      })
      if (appended !== "appended" || !confirmBegin(self.view, beginIndex, yield* Clock.currentTimeMillis)) return
      const ref = yield* traced("airdb.snapshot.merge", { from: older.from, to: newer.to }, (span) =>
        Effect.gen(function* () {
          const builder = yield* SnapshotBuilder.create(self.store, self.options.store, self.options.blockBytes)
          const ref = yield* mergeSnapshots(self.reader, builder, older, newer, self.state.variant.mergeKey)
          span?.attribute("keys", ref.keys)
          span?.attribute("bytes", ref.bytes)
          return ref
        })
      ).pipe(Effect.mapError(toStorageError("merge snapshots")))
      const added = yield* self.publishChain(ref.segment, (chain) => mergeIntoChain(chain, ref))
      if (!added) {
        yield* Effect.ignore(self.store.remove(ref.segment))
        return
      }
      self.counters.mergesCreated++
      self.telemetry.onSnapshot("merge")
      // Readers of the old chain may still read the merged-away segments for a while.
      yield* Effect.forkDaemon(
        Effect.zipRight(
          Effect.sleep(self.options.gcGraceMs),
          Effect.forEach([older.segment, newer.segment], (s) => Effect.ignore(self.store.remove(s)), { discard: true })
        )
      )
    })
  }

  /**
   * Appends the chain `next(current)` unless it no longer applies (someone else's snapshot got there first).
   * True once the chain holds `segment`, also when an append reported as failed had in fact landed.
   */
  private publishChain(segment: string, next: (chain: Chain) => Chain | undefined): Effect.Effect<boolean, AirDbError> {
    const self = this
    const published = () => self.view.chain.snapshots.some((s) => s.segment === segment)
    return Effect.gen(function* () {
      for (;;) {
        yield* self.syncStateLog()
        if (published()) return true
        const r = yield* self.appendState((view) => {
          const chain = next(view.chain)
          return chain === undefined ? undefined : { _tag: "Chain", index: view.next, chain, owner: self.id }
        })
        if (r === "appended" || published()) return true
        if (r === "skipped") return false
      }
    })
  }

  // ---- reads -------------------------------------------------------------------------------------------------

  validateKey(key: Key): AirDbInvalidArgument | undefined {
    if (typeof key !== "string" || key.length === 0) return new AirDbInvalidArgument({ reason: "empty key" })
    if (!isWellFormed(key)) return new AirDbInvalidArgument({ reason: "key is not valid Unicode (a lone surrogate)" })
    const bytes = utf8Length(key)
    if (bytes > this.options.maxKeyBytes) {
      return new AirDbInvalidArgument({
        reason: `key of ${bytes} bytes exceeds the ${this.options.maxKeyBytes}-byte limit`
      })
    }
    return undefined
  }

  validateValue(value: Uint8Array): AirDbInvalidArgument | undefined {
    if (!(value instanceof Uint8Array)) return new AirDbInvalidArgument({ reason: "value must be bytes" })
    if (value.byteLength > this.options.maxValueBytes) {
      return new AirDbInvalidArgument({
        reason: `value of ${value.byteLength} bytes exceeds the ${this.options.maxValueBytes}-byte limit`
      })
    }
    return undefined
  }

  /**
   * The key's state in the adopted snapshots, retried if a segment was merged away under it. `canSyncLog`:
   * false under applyLock (a tail sync's history lookup), which must not wait on the command log.
   */
  lookupSnapshots(
    key: Key,
    canSyncLog = true
  ): Effect.Effect<{ readonly state: KeyState | undefined; readonly chain: Chain }, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      for (let attempt = 0; ; attempt++) {
        const chain = self.adopted
        const r = yield* Effect.either(self.reader.lookup(chain.snapshots, key))
        if (Either.isRight(r)) return { state: r.right, chain }
        // A segment merged away and deleted while this client held the old chain: catch up and retry.
        if (r.left._tag === "SegmentNotFound" && attempt < 3) {
          yield* self.syncStateLog()
          if (canSyncLog) {
            yield* self.syncCommandLog()
            yield* self.syncStateLog()
          }
          continue
        }
        return yield* toStorageError("read snapshot")(r.left)
      }
    })
  }

  /**
   * A read at snapshot s(T) = `snapshot` (entries before it): the key's state then, or SnapshotMoved when it
   * was modified at or after s(T). The one read path (a transaction's reads and `Get`): the core decides from
   * the tail or asks for a snapshot lookup, and judges the lookup against what changed meanwhile.
   */
  readAt(key: Key, snapshot: number): Effect.Effect<KeyState | undefined, AirDbError | SnapshotMoved> {
    const step = (s: ReadStep): Effect.Effect<KeyState | undefined, AirDbError | SnapshotMoved> => {
      switch (s._tag) {
        case "Value":
          return Effect.succeed(s.state)
        case "Moved":
          return Effect.fail(new SnapshotMoved())
        case "Lookup":
          return Effect.flatMap(this.lookupSnapshots(key), (r) =>
            step(this.state.afterLookup(key, snapshot, r.chain, r.state))
          )
      }
    }
    return Effect.suspend(() => step(this.state.read(key, snapshot)))
  }

  /**
   * A linearizable point read: a read-only transaction of one key (same bus, same read path, same snapshot
   * bookkeeping as `transact`). §4.4's speculative read survives as a prefetch: when the key's block is not
   * cached, its lookup starts before the bus so the read after it finds the block cached; the answer never
   * comes from the prefetch.
   */
  get(key: Key, maxAttempts: number): Effect.Effect<ReadResult, AirDbError> {
    const invalid = this.validateKey(key)
    if (invalid !== undefined) return Effect.fail(invalid)
    const self = this
    return traced("airdb.get", {}, () =>
      Effect.gen(function* () {
        if (self.reader.lookupCached(self.adopted.snapshots, key) === MISS) {
          yield* Effect.forkDaemon(traced("airdb.read.speculative", {}, () => Effect.ignore(self.lookupSnapshots(key))))
        }
        for (let attempt = 1; ; attempt++) {
          const snapshot = yield* self.ride
          const read = yield* Effect.either(self.readAt(key, snapshot))
          if (Either.isRight(read)) return { value: read.right?.value, snapshot }
          if (read.left._tag !== "SnapshotMoved") return yield* Effect.fail(read.left)
          self.telemetry.onAbort("snapshot-moved")
          if (attempt >= maxAttempts) {
            return yield* new TransactionAborted({ reason: "snapshot-moved", key, attempts: attempt })
          }
        }
      })
    )
  }

  scan(start: Key, end: Key | undefined, limit: number): Effect.Effect<ScanResult, AirDbError> {
    return Effect.flatMap(this.ride, (snapshot) => this.scanAt(snapshot, start, end, limit))
  }

  private scanAt(
    snapshot: number,
    start: Key,
    end: Key | undefined,
    limit: number
  ): Effect.Effect<ScanResult, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      const chain = self.adopted
      const merged = new Map<Key, KeyState>()
      for (const s of chain.snapshots) {
        const entries = yield* self.reader.scanSnapshot(s, start, end).pipe(Effect.mapError(toStorageError("scan")))
        for (const [k, st] of entries) merged.set(k, st)
      }
      // A chain adopted meanwhile rebased the tail: keys may have moved into a snapshot this scan did not read.
      if (self.adopted !== chain) return yield* self.scanAt(snapshot, start, end, limit)
      // The tail is read now, in one step with the chain: the result is the state after `at` entries
      // (at >= the bus's tail, if a sync applied more meanwhile: still a state after the scan began).
      const at = self.replay.next
      for (const [k, st] of self.replay.tailRange(start, end)) merged.set(k, st)
      const live = [...merged].filter(([, st]) => st.value !== undefined).sort(([a], [b]) => compareKeys(a, b))
      return {
        items: live.slice(0, limit).map(([k, st]) => [k, st.value!] as const),
        snapshot: Math.max(snapshot, at),
        more: live.length > limit
      }
    })
  }

  // ---- transactions ------------------------------------------------------------------------------------------

  transact<A, E>(
    fn: (tx: Tx) => Effect.Effect<A, E | SnapshotMoved>,
    maxAttempts: number
  ): Effect.Effect<TxResult<A>, E | AirDbError> {
    const self = this
    return traced("airdb.transaction", { isolation: self.options.isolation }, (span) =>
      Effect.gen(function* () {
        let last: TransactionAborted | undefined
        for (let attempt = 1; attempt <= maxAttempts; attempt++) {
          // s(T): the tail of the bus the first read rides (§4.1: "A client begins a transaction T by
          // synchronizing with the tail"). A transaction that reads nothing needs no bus: its checked keys are
          // none (SS) or its writes (SI), checked from the entries this client has seen.
          let snapshot: number | undefined
          const begin = Effect.suspend(() =>
            snapshot !== undefined
              ? Effect.succeed(snapshot)
              : Effect.map(
                  traced("airdb.transaction.sync", {}, () => self.ride),
                  (n) => (snapshot ??= n)
                )
          )
          const reads = new Set<Key>()
          const writes = new Map<Key, Uint8Array | undefined>()
          const tx: Tx = {
            get: (key) =>
              Effect.suspend(() => {
                const invalid = self.validateKey(key)
                if (invalid !== undefined) return Effect.fail(invalid)
                if (writes.has(key)) return Effect.succeed(writes.get(key))
                reads.add(key)
                return Effect.flatMap(begin, (s) => Effect.map(self.readAt(key, s), (state) => state?.value))
              }),
            put: (key, value) =>
              Effect.suspend(() => {
                const invalid = self.validateKey(key) ?? self.validateValue(value)
                if (invalid !== undefined) return Effect.fail(invalid)
                writes.set(key, value)
                return Effect.void
              }),
            delete: (key) =>
              Effect.suspend(() => {
                const invalid = self.validateKey(key)
                if (invalid !== undefined) return Effect.fail(invalid)
                writes.set(key, undefined)
                return Effect.void
              })
          }
          const ran = yield* Effect.either(fn(tx))
          if (Either.isLeft(ran)) {
            if (ran.left instanceof SnapshotMoved) {
              self.telemetry.onAbort("snapshot-moved")
              last = new TransactionAborted({ reason: "snapshot-moved", attempts: attempt })
              continue
            }
            return yield* Effect.fail(ran.left as E)
          }
          snapshot ??= self.replay.next
          span?.attribute("attempts", attempt)
          span?.attribute("snapshot", snapshot)
          if (writes.size === 0) return { value: ran.right, commitTs: undefined, snapshot, attempts: attempt }
          const writeList: Array<Write> = [...writes].map(([key, value]) => ({ key, value }))
          const intention: Intention = {
            snapshotEntries: snapshot,
            checked: checkedKeys(self.options.isolation, reads, writeList),
            writes: writeList,
            tx: ++self.txSeq
          }
          self.hooks.onSubmit?.(intention)
          const outcome = yield* traced("airdb.transaction.commit", { writes: writeList.length }, (cspan) =>
            Effect.tap(self.submit(intention), (o) => {
              cspan?.attribute("outcome", o._tag)
              cspan?.attribute("commit.ts", o.ts)
            })
          )
          if (outcome._tag === "Committed") {
            span?.attribute("commit.ts", outcome.ts)
            return { value: ran.right, commitTs: outcome.ts, snapshot, attempts: attempt }
          }
          last = new TransactionAborted({
            reason: outcome.reason,
            ...(outcome.key === undefined ? {} : { key: outcome.key }),
            attempts: attempt
          })
          // Contending transactions back off by a random time, so one of them gets through the next round.
          if (attempt < maxAttempts) {
            yield* Effect.sleep(yield* Random.nextIntBetween(0, Math.min(64, 2 ** attempt) + 1))
          }
        }
        return yield* Effect.fail(last ?? new TransactionAborted({ reason: "conflict", attempts: maxAttempts }))
      })
    )
  }

  dump(): Effect.Effect<{ readonly snapshot: number; readonly state: ReadonlyMap<Key, Uint8Array> }, AirDbError> {
    return Effect.map(this.scan("", undefined, Number.MAX_SAFE_INTEGER), (r) => ({
      snapshot: r.snapshot,
      state: new Map(r.items)
    }))
  }

  stats(): ClientStats {
    return {
      entries: this.replay.next,
      chainEnd: chainEnd(this.adopted),
      tailKeys: this.replay.tailSize,
      ...this.counters,
      blockReads: this.reader.blockReads,
      cacheHits: this.reader.cache.hits,
      cacheMisses: this.reader.cache.misses,
      cacheBytes: this.reader.cache.usedBytes,
      indexBytes: this.reader.indexBytes()
    }
  }

  /** Fails everything waiting (the client is closing). */
  close(): Effect.Effect<void> {
    return Effect.sync(() => {
      this.closed = true
      const closed = new ClientClosed()
      for (const resume of this.riders) resume(Effect.fail(closed))
      for (const p of this.pending) p.done(Effect.fail(closed))
      this.riders = []
      this.pending = []
    })
  }
}

/**
 * Opens a client of the store named in `options` on `store` (creating the store if nobody has): a cold start
 * that reads the state log's last segment, the live snapshots' indexes and the command log's tail. Its
 * fibers live in the current scope.
 */
export const openClient = (
  store: SegmentStoreShape,
  options: AirDbOptions,
  hooks: ClientHooks = {}
): Effect.Effect<AirDbClient, AirDbError, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = resolveOptions(options, () => randomBytes(8).toString("hex"))
    const c = new Client(store, resolved, hooks)
    yield* c.open()
    yield* Effect.addFinalizer(() => c.close())
    yield* Effect.forkScoped(c.busLoop)
    yield* Effect.forkScoped(c.writerLoop)
    if (resolved.snapshots) {
      yield* Effect.forkScoped(c.snapshotLoop)
      yield* Effect.forkScoped(c.mergeLoop)
    }
    const client: AirDbClient = {
      id: c.id,
      config: c.config,
      get: (key) => c.get(key, resolved.maxAttempts),
      put: (key, value) =>
        Effect.map(
          c.transact((tx) => tx.put(key, value), resolved.maxAttempts),
          (r) => r.commitTs ?? 0
        ),
      delete: (key) =>
        Effect.map(
          c.transact((tx) => tx.delete(key), resolved.maxAttempts),
          (r) => r.commitTs ?? 0
        ),
      scan: (start, end, limit) => c.scan(start, end, limit ?? 1000),
      transact: (fn, o) => c.transact(fn, o?.maxAttempts ?? resolved.maxAttempts),
      sync: c.ride,
      stats: () => c.stats(),
      dump: c.dump()
    }
    return client
  })
