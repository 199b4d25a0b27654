/**
 * The AirDB client (§4.4): an embedded database whose whole state is on shared storage. Its protocol is the
 * pure ClientCore (src/core/client-core.ts): the bus stand (tail syncs), the writer (batched conditional
 * appends, outcomes learned from the log) and the read path. This file is its shell: it feeds the core
 * requests, storage answers and timer ticks (with the time), and performs the effects the core returns (log
 * reads and appends, snapshot lookups and index loads, replies, one timer), each storage call a fiber in the
 * client's scope that hands its answer back as the next input. Inputs are taken one at a time, in order.
 *
 * The snapshotter and the merger (begin-snapshot, blocks, index, chain record; recursive compaction) stay
 * procedures here: the core says when a snapshot is due and takes the state log's records; what they decide
 * comes from coordination.ts. The simulator's broken clients are variants of the core, never switches here.
 */
import { randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberSet from "effect/FiberSet"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import { utf8Length } from "../core/blocks.js"
import { type Chain, chainEnd, extendChain, mergeIntoChain } from "../core/chain.js"
import { ClientCore, type CoreEffect, type CoreFailure, type CoreInput, type CoreReply } from "../core/client-core.js"
import type { CoreVariant } from "../core/client-state.js"
import {
  applyStateRecord,
  confirmBegin,
  emptyStateView,
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
  type Ts,
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
import { type LogCursor, locationOf, SharedLog } from "../log/shared-log.js"
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
import { MISS, mergeSnapshots, SnapshotBuilder, SnapshotReader } from "./snapshots.js"
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

/** How often a cold start that has not finished says which step it is in. */
const COLD_START_REPORT_MS = 10_000

/** Command entries one read of a tail sync asks for. */
const SYNC_READ_RECORDS = 256

const isWellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed()

class Client {
  readonly id: string
  config: StoreConfig
  cmdLog: SharedLog
  stateLog: SharedLog
  readonly reader: SnapshotReader

  /** The protocol (set by the cold start, which reads the view it starts from). */
  core!: ClientCore
  /** The state-log view before the core exists (the cold start reads it). */
  private initialView: StateView = emptyStateView
  /**
   * Where command-log entry i is stored, for the indexes the core may read or append at next (its tail; an
   * own append moves it one further before the core applies it). Entries behind the core's tail are dropped.
   */
  readonly cursors = new Map<number, LogCursor>()

  // The state log as applied up to `stateCursor`.
  stateCursor!: LogCursor
  readonly stateLock = Effect.unsafeMakeSemaphore(1)

  // The shell of the core: inputs taken one at a time, replies by request id, one timer.
  private readonly inbox: Array<CoreInput> = []
  private draining = false
  private readonly starts: Array<Effect.Effect<void>> = []
  private readonly waiting = new Map<number, (reply: CoreReply) => void>()
  private nextRequest = 1
  /** Transactions begun by this incarnation (an intention's id within it). */
  txSeq = 0
  private timerAt = Number.POSITIVE_INFINITY
  private readonly busStarted = new Map<number, number>()
  /** Forks a storage call in the client's scope (set when the client opens). */
  private run: (<A, E>(effect: Effect.Effect<A, E>) => unknown) | undefined
  private clock!: Clock.Clock

  // Snapshotter.
  readonly snapshotBell = Effect.runSync(Queue.sliding<void>(1))
  readonly mergeBell = Effect.runSync(Queue.sliding<void>(1))
  merging = false

  readonly telemetry: AirDbTelemetry
  readonly counters = {
    snapshotsCreated: 0,
    mergesCreated: 0,
    coldStartMs: 0
  }

  constructor(
    readonly store: SegmentStoreShape,
    readonly options: ResolvedOptions,
    readonly hooks: ClientHooks = {}
  ) {
    this.id = options.clientId
    this.config = options.create
    this.reader = new SnapshotReader(store, options.cacheBytes)
    this.telemetry = new AirDbTelemetry(options.store)
    this.cmdLog = this.makeCommandLog(this.config)
    this.stateLog = this.makeStateLog(this.config)
  }

  get replay(): CommandReplay {
    return this.core.state.replay
  }

  get view(): StateView {
    return this.core === undefined ? this.initialView : this.core.state.view
  }

  /** The chain whose snapshots reads use (its end is the replay's base). */
  get adopted(): Chain {
    return this.core.state.adopted
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

  // ---- opening: the cold start (§5.3.3: "It read only the state log indexes and applied the command log tail")

  open(run: <A, E>(effect: Effect.Effect<A, E>) => unknown, clock: Clock.Clock): Effect.Effect<void, AirDbError> {
    const self = this
    this.run = run
    this.clock = clock
    // Which step of the cold start runs now: a start that takes long says where it is (a restart that printed
    // nothing for 30 s under a nemesis was otherwise a mystery).
    let phase = "creating or opening the store"
    const watchdog = Effect.forever(
      Effect.zipRight(
        Effect.sleep(COLD_START_REPORT_MS),
        Effect.suspend(() =>
          Effect.logWarning(
            `airdb ${self.options.store}: cold start still ${phase} after ${clock.unsafeCurrentTimeMillis() - started} ms`
          )
        )
      )
    )
    const started = clock.unsafeCurrentTimeMillis()
    const body = Effect.gen(function* () {
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

      phase = "reading the state log and the snapshots' indexes"
      yield* traced("airdb.cold-start.index-load", {}, (span) =>
        Effect.gen(function* () {
          self.stateCursor = self.stateLog.lastSegmentCursor()
          self.initialView = { ...emptyStateView, config: self.config, next: self.stateCursor.index }
          yield* self.syncStateLogUnlocked()
          const chain = self.view.chain
          yield* self.reader.ensureIndexes(chain.snapshots).pipe(Effect.mapError(toStorageError("load indexes")))
          self.reader.retain(chain.snapshots)
          span?.attribute("snapshots", chain.snapshots.length)
          span?.attribute("index.bytes", self.reader.indexBytes())
          span?.attribute("chain.end", chainEnd(chain))
        })
      )
      phase = "replaying the command log's tail"
      yield* traced("airdb.cold-start.tail-replay", {}, (span) =>
        Effect.gen(function* () {
          const chain = self.view.chain
          const cursor = yield* (
            chain.snapshots.length === 0
              ? Effect.succeed(self.cmdLog.startCursor())
              : self.cmdLog.cursorAt(chain.replayFrom)
          ).pipe(Effect.mapError(toStorageError("locate replay start")))
          self.cursors.set(cursor.index, cursor)
          self.core = new ClientCore(
            {
              writer: self.id,
              config: self.config,
              minSyncGapMs: self.options.minSyncGapMs,
              maxBatchIntentions: self.options.maxBatchIntentions,
              maxBatchBytes: self.store.limits.maxAppendBytes - ENTRY_OVERHEAD_BYTES,
              readRecords: SYNC_READ_RECORDS,
              snapshots: self.options.snapshots,
              ...(self.hooks.variant === undefined ? {} : { variant: self.hooks.variant })
            },
            self.initialView
          )
          const n = yield* self.ride
          span?.attribute("entries", n - chain.replayFrom.index)
          span?.attribute("tail.keys", self.replay.tailSize)
        })
      )
      phase = "loading every snapshot (eager)"
      if (self.options.eager) yield* self.loadEverything()
      self.counters.coldStartMs = clock.unsafeCurrentTimeMillis() - started
      self.telemetry.onColdStart(self.counters.coldStartMs)
    })
    return traced("airdb.cold-start", { store: this.options.store, client: this.id }, () =>
      Effect.raceFirst(body, watchdog)
    )
  }

  /** SLSMR's start: every block of every live snapshot into memory (a full state download). */
  private loadEverything(): Effect.Effect<void, AirDbError> {
    return Effect.forEach(this.adopted.snapshots, (s) => Effect.asVoid(this.reader.scanSnapshot(s, "", undefined)), {
      discard: true
    }).pipe(Effect.mapError(toStorageError("load snapshots")))
  }

  // ---- the shell of the core ---------------------------------------------------------------------------------

  /**
   * Hands the core one input and performs what it returns. Inputs arriving while effects are performed wait
   * their turn; storage calls start once the inputs waiting are taken, so a call that completes at once (the
   * memory store) is the next input, never a step inside a step.
   */
  private dispatch(input: CoreInput) {
    this.inbox.push(input)
    if (this.draining) return
    this.draining = true
    try {
      for (let next = this.inbox.shift(); next !== undefined; next = this.inbox.shift()) {
        for (const effect of this.core.step(this.clock.unsafeCurrentTimeMillis(), next)) this.perform(effect)
      }
      for (const [i] of this.cursors) if (i < this.core.next) this.cursors.delete(i)
    } finally {
      this.draining = false
    }
    // Each call starts on the scheduler, not inside this call: a store that answers at once (memory) must
    // not run a caller's whole workload in one go while the snapshotter waits for a turn.
    const starts = this.starts.splice(0)
    for (const effect of starts) this.run?.(Effect.zipRight(Effect.yieldNow(), effect))
  }

  /** A storage call whose answer is the core's next input. */
  private io(effect: Effect.Effect<CoreInput>) {
    this.starts.push(Effect.flatMap(effect, (input) => Effect.sync(() => this.dispatch(input))))
  }

  private perform(effect: CoreEffect) {
    switch (effect._tag) {
      case "ReadLog":
        return this.io(this.readLog(effect.sync, effect.from, effect.max, effect.first))
      case "LoadHistory":
        return this.io(
          Effect.match(
            Effect.forEach(
              effect.keys,
              (k) => Effect.map(this.lookupIn(effect.chain, k), (s) => [k, s?.modified] as const),
              {
                concurrency: 8
              }
            ),
            {
              onSuccess: (pairs): CoreInput => ({
                _tag: "History",
                sync: effect.sync,
                lastModified: new Map<Key, Ts | undefined>(pairs)
              }),
              onFailure: (e): CoreInput => ({ _tag: "LogReadFailed", sync: effect.sync, failure: failureOf(e) })
            }
          )
        )
      case "Append":
        return this.io(this.append(effect.seq, effect.entry))
      case "Lookup":
        return this.io(
          Effect.matchEffect(this.reader.lookup(effect.chain.snapshots, effect.key), {
            onSuccess: (state) =>
              Effect.succeed<CoreInput>({ _tag: "Looked", id: effect.id, chain: effect.chain, state }),
            onFailure: (e) =>
              // A segment merged away and deleted while this client held the old chain: catch up, look again.
              e._tag === "SegmentNotFound"
                ? Effect.as(Effect.ignore(this.syncStateLog()), {
                    _tag: "LookFailed",
                    id: effect.id,
                    failure: failureOf(asAirDbError("read snapshot", e)),
                    again: true
                  } satisfies CoreInput)
                : Effect.succeed<CoreInput>({
                    _tag: "LookFailed",
                    id: effect.id,
                    failure: failureOf(asAirDbError("read snapshot", e)),
                    again: false
                  })
          })
        )
      case "LoadIndexes":
        // Loaded already (a state-log sync loads them before it hands the records in): adopted in this step.
        if (this.reader.hasIndexes(effect.chain.snapshots)) {
          this.inbox.push({ _tag: "IndexesLoaded", chain: effect.chain })
          return
        }
        return this.io(
          Effect.match(this.reader.ensureIndexes(effect.chain.snapshots), {
            onSuccess: (): CoreInput => ({ _tag: "IndexesLoaded", chain: effect.chain }),
            onFailure: (): CoreInput => ({ _tag: "IndexesFailed", chain: effect.chain })
          })
        )
      case "Reply": {
        const resume = this.waiting.get(effect.id)
        this.waiting.delete(effect.id)
        return resume?.(effect.reply)
      }
      case "WakeAt": {
        // One timer, the earliest asked for; a timer already due fires soon but not at the later time.
        const now = this.clock.unsafeCurrentTimeMillis()
        if (effect.atMs >= this.timerAt && this.timerAt > now) return
        this.timerAt = effect.atMs
        const wait = Math.max(0, effect.atMs - now)
        this.starts.push(
          Effect.zipRight(
            Effect.sleep(wait),
            Effect.sync(() => {
              if (this.timerAt === effect.atMs) this.timerAt = Number.POSITIVE_INFINITY
              this.dispatch({ _tag: "Tick" })
            })
          )
        )
        return
      }
      case "SnapshotDue":
        if (this.options.snapshots) Queue.unsafeOffer(this.snapshotBell, undefined)
        return
      case "SyncStateLog":
        this.starts.push(Effect.ignore(this.syncStateLog()))
        return
      case "Note":
        return this.noted(effect.note)
    }
  }

  private noted(note: Extract<CoreEffect, { _tag: "Note" }>["note"]) {
    switch (note._tag) {
      case "BusDeparted":
        this.telemetry.onSync()
        this.busStarted.set(note.sync, this.clock.unsafeCurrentTimeMillis())
        return
      case "BusArrived": {
        const started = this.busStarted.get(note.sync) ?? this.clock.unsafeCurrentTimeMillis()
        this.busStarted.delete(note.sync)
        this.telemetry.onTailSync(this.clock.unsafeCurrentTimeMillis() - started, note.tail - chainEnd(this.view.chain))
        return
      }
      case "Applied":
        this.telemetry.onEntry()
        if (note.entry.writer === this.id) {
          for (const o of note.outcomes) {
            this.telemetry.onOwnOutcome(o._tag === "Committed")
            if (o._tag === "Aborted") this.telemetry.onAbort(o.reason)
          }
        }
        return
      case "AppendConflict":
        return this.telemetry.onAppendConflict()
      case "SnapshotMoved":
        return this.telemetry.onAbort("snapshot-moved")
      case "Adopted":
        return this.reader.retain(note.chain.snapshots)
      case "Fatal":
        return
    }
  }

  /**
   * One read of a tail sync from entry `from`. A store that numbers its records reads up to its tail in the
   * read itself (a read returns fewer records than asked only at the tail as it was then): the reads are the
   * check, one storage call when nothing is new. A store addressed by bytes (Azure) is asked for its size
   * first, and the sync reads up to that size.
   */
  private readonly tailBounds = new Map<number, { readonly segment: string; readonly size: number }>()

  private readLog(sync: number, from: number, max: number, first: boolean): Effect.Effect<CoreInput> {
    const self = this
    // Where entry `from` is, taken now: by the time the read runs the core may have moved past it.
    const cursor = this.cursors.get(from)
    return traced("airdb.tail-sync", { entry: from, first }, (span) =>
      Effect.gen(function* () {
        if (cursor === undefined) {
          return yield* new StoreCorrupt({ reason: `no log position known for entry ${from}` })
        }
        if (first) self.tailBounds.delete(sync - 1)
        if (first && self.store.limits.byteAddressed) {
          self.tailBounds.set(sync, { segment: cursor.segment, size: yield* self.cmdLog.size(cursor) })
        }
        const t = self.tailBounds.get(sync)
        const bound = t !== undefined && t.segment === cursor.segment ? t.size : undefined
        if (bound !== undefined && cursor.position >= bound && !self.cmdLog.isSealed(cursor)) {
          return { _tag: "LogRead", sync, from, entries: [], atTail: true } satisfies CoreInput
        }
        const got = yield* self.cmdLog.read(cursor, max, bound)
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
        self.cursors.set(from + entries.length, got.cursor)
        span?.attribute("entries", entries.length)
        // Nothing, or fewer than asked: the read reached the tail (what writers append meanwhile is the next
        // bus's). With a size bound, the tail is the bound.
        const atTail =
          entries.length === 0 ||
          (bound !== undefined
            ? got.cursor.segment === cursor.segment && got.cursor.position >= bound && !self.cmdLog.isSealed(got.cursor)
            : entries.length < max && !self.cmdLog.isSealed(got.cursor))
        return { _tag: "LogRead", sync, from, entries, atTail } satisfies CoreInput
      })
    ).pipe(
      Effect.catchAll((e) =>
        Effect.succeed<CoreInput>({ _tag: "LogReadFailed", sync, failure: failureOf(asAirDbError("sync", e)) })
      )
    )
  }

  private append(seq: number, entry: CommandEntry): Effect.Effect<CoreInput> {
    const cursor = this.cursors.get(entry.index)
    if (cursor === undefined) {
      return Effect.succeed({
        _tag: "AppendFailed",
        seq,
        index: entry.index,
        kind: "conflict",
        failure: { _tag: "Unavailable", operation: "append", reason: "tail position unknown", outcomeUnknown: false }
      })
    }
    const bytes = encodeCommandEntry(entry)
    return traced(
      "airdb.append",
      { entry: entry.index, intentions: entry.intentions.length, bytes: bytes.byteLength },
      () => this.cmdLog.append(cursor, bytes)
    ).pipe(
      Effect.match({
        onSuccess: (next): CoreInput => {
          this.cursors.set(entry.index + 1, next)
          return { _tag: "Appended", seq, index: entry.index }
        },
        onFailure: (e): CoreInput => ({
          _tag: "AppendFailed",
          seq,
          index: entry.index,
          // Timed out or unavailable: the append may have happened; only the log can tell.
          kind:
            e._tag === "SegmentConflict"
              ? "conflict"
              : e._tag === "SegmentTimeout" || e._tag === "SegmentUnavailable"
                ? "ambiguous"
                : "failed",
          failure: failureOf(asAirDbError("append", e, true))
        })
      })
    )
  }

  /** Asks the core; resumes with its reply (an interrupted asker's reply is dropped). */
  private request(make: (id: number) => CoreInput): Effect.Effect<CoreReply> {
    return Effect.async<CoreReply>((resume) => {
      const id = this.nextRequest++
      this.waiting.set(id, (reply) => resume(Effect.succeed(reply)))
      this.dispatch(make(id))
      return Effect.sync(() => {
        this.waiting.delete(id)
      })
    })
  }

  /** Waits for the next bus to leave and return: the tail it checked is after this call began. */
  readonly ride: Effect.Effect<number, AirDbError> = Effect.flatMap(
    Effect.suspend(() => this.request((id) => ({ _tag: "Ride", id }))),
    (reply) => (reply._tag === "Tail" ? Effect.succeed(reply.tail) : Effect.fail(errorOfReply(reply)))
  )

  /** Commits an intention: its outcome once its entry is in the log and applied. */
  submit(intention: Intention): Effect.Effect<Outcome, AirDbError> {
    return Effect.flatMap(
      this.request((id) => ({ _tag: "Submit", id, intention, bytes: intentionBytes(intention) })),
      (reply) => (reply._tag === "Outcome" ? Effect.succeed(reply.outcome) : Effect.fail(errorOfReply(reply)))
    )
  }

  private applyStateRecords(records: ReadonlyArray<StateRecord>, nowMs: number) {
    if (this.core === undefined) {
      for (const r of records) this.initialView = applyStateRecord(this.initialView, r, nowMs)
    } else this.dispatch({ _tag: "StateRecords", records })
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
        // The chain these records lead to is adopted in the step that takes them, its indexes loaded first
        // (a snapshotter that syncs the state log finds the chain adopted after it, as it planned against).
        // Best effort: a chain a later record replaces may name segments merged away and deleted since.
        const ahead = records.reduce((view, r) => applyStateRecord(view, r, now), self.view)
        yield* Effect.ignore(self.reader.ensureIndexes(ahead.chain.snapshots))
        // Applied and the cursor moved in one step (no yield between): an interrupted sync never leaves the
        // view ahead of its cursor.
        self.applyStateRecords(records, now)
        self.stateCursor = got.cursor
      }
    }).pipe(Effect.mapError(toStorageError("state sync")))
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
      if (chainEnd(self.view.chain) > self.replay.next) yield* self.ride
      yield* self.syncStateLog()
      const now = yield* Clock.currentTimeMillis
      const plan = planExtension(self.view, self.replay.next, now, self.id)
      const duty = self.core.hasSnapshotDuty
      if (plan._tag === "Begin" && duty) yield* self.createSnapshot()
      else if (plan._tag === "Wait") yield* self.lookAgainAt(plan.untilMs - now)
      // A merge runs in a fiber of its own: a long one never holds up the next extension, which writers
      // may be waiting for (the timely bound).
      if (duty && !self.merging) yield* Queue.offer(self.mergeBell, undefined)
    })
  }

  // Snapshot duty (ClientCore.hasSnapshotDuty) falls on the clients whose commands a snapshot would
  // materialise: a client that only reads adopts the chain others publish and never pays for their writes
  // beyond replaying them (isolation, §5.3.2). Writers held at the (1+ε)B bound have it too, so the invariant
  // never waits on a reader.

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
      const cursor = self.cursors.get(partial.to)
      if (cursor === undefined) return
      const replayFrom = locationOf(cursor)
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
          const ref = yield* mergeSnapshots(self.reader, builder, older, newer, self.core.variant.mergeKey)
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

  /** The key's state in `chain`'s snapshots, looked again on the adopted chain if a segment was merged away. */
  private lookupIn(chain: Chain, key: Key): Effect.Effect<KeyState | undefined, AirDbError> {
    const self = this
    return Effect.gen(function* () {
      let on = chain
      for (let attempt = 0; ; attempt++) {
        const r = yield* Effect.either(self.reader.lookup(on.snapshots, key))
        if (Either.isRight(r)) return r.right
        if (r.left._tag === "SegmentNotFound" && attempt < 3) {
          yield* self.syncStateLog()
          on = self.adopted
          continue
        }
        return yield* toStorageError("read snapshot")(r.left)
      }
    })
  }

  /**
   * A read at snapshot s(T) = `snapshot` (entries before it): the key's state then, or SnapshotMoved when it
   * was modified at or after s(T). The one read path (a transaction's reads and `Get`), the core's.
   */
  readAt(key: Key, snapshot: number): Effect.Effect<KeyState | undefined, AirDbError | SnapshotMoved> {
    return Effect.flatMap(
      this.request((id) => ({ _tag: "Read", id, key, snapshot })),
      (reply): Effect.Effect<KeyState | undefined, AirDbError | SnapshotMoved> =>
        reply._tag === "Value"
          ? Effect.succeed(reply.state)
          : reply._tag === "Moved"
            ? Effect.fail(new SnapshotMoved())
            : Effect.fail(errorOfReply(reply))
    )
  }

  /**
   * A linearizable point read: a read-only transaction of one key (same bus, same read path, same snapshot
   * bookkeeping as `transact`, in the core). §4.4's speculative read survives as a prefetch: when the key's
   * block is not cached, its lookup starts before the bus so the read after it finds the block cached; the
   * answer never comes from the prefetch.
   */
  get(key: Key, maxAttempts: number): Effect.Effect<ReadResult, AirDbError> {
    const invalid = this.validateKey(key)
    if (invalid !== undefined) return Effect.fail(invalid)
    const self = this
    return traced("airdb.get", {}, () =>
      Effect.gen(function* () {
        const chain = self.adopted
        if (self.reader.lookupCached(chain.snapshots, key) === MISS) {
          yield* Effect.forkDaemon(
            traced("airdb.read.speculative", {}, () => Effect.ignore(self.reader.lookup(chain.snapshots, key)))
          )
        }
        const reply = yield* self.request((id) => ({ _tag: "Get", id, key, maxAttempts }))
        if (reply._tag === "Value") return { value: reply.state?.value, snapshot: reply.snapshot }
        if (reply._tag === "Aborted") {
          return yield* new TransactionAborted({ reason: "snapshot-moved", key, attempts: reply.attempts })
        }
        return yield* Effect.fail(errorOfReply(reply))
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
    const c = this.core.counters
    return {
      entries: this.replay.next,
      chainEnd: chainEnd(this.adopted),
      tailKeys: this.replay.tailSize,
      syncs: c.syncs,
      appends: c.appends,
      appendConflicts: c.appendConflicts,
      committed: c.committed,
      aborted: c.aborted,
      waitsOnInvariant: c.waitsOnInvariant,
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
      if (this.core !== undefined) this.dispatch({ _tag: "Close" })
      this.run = undefined
    })
  }
}

/** A core failure as the client's tagged error. */
const errorOf = (f: CoreFailure): AirDbError => {
  switch (f._tag) {
    case "Unavailable":
      return new StorageUnavailable({ operation: f.operation, reason: f.reason, outcomeUnknown: f.outcomeUnknown })
    case "Corrupt":
      return new StoreCorrupt({ reason: f.reason })
    case "Closed":
      return new ClientClosed()
    case "TooLarge":
      return new TransactionTooLarge({ bytes: f.bytes, limitBytes: f.limitBytes })
  }
}

const errorOfReply = (reply: CoreReply): AirDbError =>
  reply._tag === "Failed"
    ? errorOf(reply.failure)
    : new StoreCorrupt({ reason: `the client core answered ${reply._tag} out of turn` })

/** A client error as plain data for the core. */
const failureOf = (e: AirDbError): CoreFailure => {
  switch (e._tag) {
    case "StorageUnavailable":
      return { _tag: "Unavailable", operation: e.operation, reason: e.reason, outcomeUnknown: e.outcomeUnknown }
    case "StoreCorrupt":
      return { _tag: "Corrupt", reason: e.reason }
    case "ClientClosed":
      return { _tag: "Closed" }
    case "TransactionTooLarge":
      return { _tag: "TooLarge", bytes: e.bytes, limitBytes: e.limitBytes }
    default:
      return { _tag: "Unavailable", operation: "storage", reason: e.message, outcomeUnknown: false }
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
    // Storage calls are fibers of this scope: closing the client interrupts them (after failing every waiter).
    const calls = yield* FiberSet.make<unknown, unknown>()
    const run = yield* FiberSet.runtime(calls)<never>()
    yield* Effect.addFinalizer(() => c.close())
    yield* c.open((effect) => run(effect as Effect.Effect<unknown, unknown, never>), yield* Effect.clock)
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
