/**
 * The AirDB client's protocol (§4.1, §4.4) as one deterministic step function: requests, log entries read,
 * append results, lookups, state records and timer ticks in (with the time passed in); storage calls to make,
 * replies and timers out. No clock, no I/O, no randomness: the shell (src/client/client.ts) performs the
 * effects and feeds their results back; the simulator (src/sim/core-sim.ts) does the same over a model of
 * storage with faults.
 *
 * Three machines share the materialised state (ClientState):
 *
 *   - the bus stand: riders (a transaction's begin, a `Get`, a writer that must learn the log) board the next
 *     bus; one tail sync at a time, at least `minSyncGapMs` after the last departure; a bus reads the command
 *     log from the client's tail until a read comes back short (the tail as it was then) and every rider
 *     learns that tail: a snapshot s(T) taken after it boarded;
 *   - the writer: intentions batched into one entry, appended conditionally at the client's tail; a conflict
 *     or an ambiguous answer is settled by the log alone (a sync, then the entry's outcomes if it landed,
 *     else another append), so a commit is acknowledged only once its entry is in the log and applied;
 *   - the read path: a key's state at s(T) from the tail or a snapshot lookup, judged again after the lookup
 *     (ClientState.read / afterLookup); a `Get` is a read-only transaction of one key.
 *
 * Snapshot creation itself (writing blocks, begin/confirm/publish on the state log: coordination.ts) is the
 * shell's: the core says when one is due (`SnapshotDue`), takes the state log's records and adopts a chain once
 * its indexes are loaded.
 */
import { type Chain, chainEnd } from "./chain.js"
import { ClientState, type CoreVariant, STANDARD_VARIANT } from "./client-state.js"
import type { StateRecord, StateView, StoreConfig } from "./coordination.js"
import { type CommandEntry, commitTs, type Intention, type Key, type KeyState, type Outcome, type Ts } from "./types.js"

export interface CoreParams {
  /** The writer id of this incarnation (entries it appends carry it). */
  readonly writer: string
  readonly config: StoreConfig
  /** Least time between two bus departures (§4.4: "e.g., 10ms"). */
  readonly minSyncGapMs: number
  readonly maxBatchIntentions: number
  /** Bytes of intentions one entry may carry. */
  readonly maxBatchBytes: number
  /** Entries one log read asks for: a read that returns fewer reached the tail. */
  readonly readRecords: number
  /** Take part in materialisation (say when a snapshot is due). */
  readonly snapshots: boolean
  readonly variant?: CoreVariant
}

/** Why a request failed, as plain data (the shell maps it to its tagged errors). */
export type CoreFailure =
  | {
      readonly _tag: "Unavailable"
      readonly operation: string
      readonly reason: string
      readonly outcomeUnknown: boolean
    }
  | { readonly _tag: "Corrupt"; readonly reason: string }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "TooLarge"; readonly bytes: number; readonly limitBytes: number }

export type CoreInput =
  /** Board the next bus: reply `Tail` with the tail it checked. */
  | { readonly _tag: "Ride"; readonly id: number }
  /** A linearizable point read: reply `Value` (with its snapshot) or `Aborted` after `maxAttempts` moves. */
  | { readonly _tag: "Get"; readonly id: number; readonly key: Key; readonly maxAttempts: number }
  /** A transaction's read at its snapshot: reply `Value` or `Moved`. */
  | { readonly _tag: "Read"; readonly id: number; readonly key: Key; readonly snapshot: number }
  /** A `Lookup` answered: the key's state in `chain`'s snapshots. */
  | { readonly _tag: "Looked"; readonly id: number; readonly chain: Chain; readonly state: KeyState | undefined }
  /** A `Lookup` failed; `again`: a segment was merged away (the shell refreshed the state log), look again. */
  | { readonly _tag: "LookFailed"; readonly id: number; readonly failure: CoreFailure; readonly again: boolean }
  /** A transaction's intention to commit: reply `Outcome` once its entry is applied. */
  | { readonly _tag: "Submit"; readonly id: number; readonly intention: Intention; readonly bytes: number }
  /** A `ReadLog` answered: entries from `from` on; `atTail`: fewer than asked came (the tail then). */
  | {
      readonly _tag: "LogRead"
      readonly sync: number
      readonly from: number
      readonly entries: ReadonlyArray<CommandEntry>
      readonly atTail: boolean
    }
  | { readonly _tag: "LogReadFailed"; readonly sync: number; readonly failure: CoreFailure }
  /** A `LoadHistory` answered: each key's last modification in the snapshots (undefined: never). */
  | { readonly _tag: "History"; readonly sync: number; readonly lastModified: ReadonlyMap<Key, Ts | undefined> }
  | { readonly _tag: "Appended"; readonly seq: number; readonly index: number }
  /** conflict: the log had grown; ambiguous: it may have landed; failed: a storage error, outcome unknown. */
  | {
      readonly _tag: "AppendFailed"
      readonly seq: number
      readonly index: number
      readonly kind: "conflict" | "ambiguous" | "failed"
      readonly failure: CoreFailure
    }
  /** State-log records read, in order, from where the last batch ended. */
  | { readonly _tag: "StateRecords"; readonly records: ReadonlyArray<StateRecord> }
  | { readonly _tag: "IndexesLoaded"; readonly chain: Chain }
  | { readonly _tag: "IndexesFailed"; readonly chain: Chain }
  /** A timer asked for by `WakeAt` (or any later time). */
  | { readonly _tag: "Tick" }
  | { readonly _tag: "Close" }

export type CoreReply =
  | { readonly _tag: "Tail"; readonly tail: number }
  | { readonly _tag: "Value"; readonly state: KeyState | undefined; readonly snapshot: number }
  | { readonly _tag: "Moved" }
  | { readonly _tag: "Outcome"; readonly outcome: Outcome }
  | { readonly _tag: "Aborted"; readonly attempts: number }
  | { readonly _tag: "Failed"; readonly failure: CoreFailure }

/** What the shell records (metrics, spans): no decision depends on it. */
export type CoreNote =
  | { readonly _tag: "BusDeparted"; readonly sync: number; readonly riders: number }
  | { readonly _tag: "BusArrived"; readonly sync: number; readonly tail: number; readonly ok: boolean }
  | { readonly _tag: "Applied"; readonly entry: CommandEntry; readonly outcomes: ReadonlyArray<Outcome> }
  | { readonly _tag: "AppendConflict" }
  | { readonly _tag: "SnapshotMoved" }
  | { readonly _tag: "Adopted"; readonly chain: Chain }
  | { readonly _tag: "Fatal"; readonly reason: string }

export type CoreEffect =
  /** Read up to `max` command entries from index `from` (`first`: a new tail check starts here). */
  | {
      readonly _tag: "ReadLog"
      readonly sync: number
      readonly from: number
      readonly max: number
      readonly first: boolean
    }
  /** Look up the keys' last modifications in `chain`'s snapshots; answer `History`. */
  | { readonly _tag: "LoadHistory"; readonly sync: number; readonly keys: ReadonlyArray<Key>; readonly chain: Chain }
  /** Append `entry` at index `entry.index`, only if the log holds exactly that many entries. */
  | { readonly _tag: "Append"; readonly seq: number; readonly entry: CommandEntry }
  | { readonly _tag: "Lookup"; readonly id: number; readonly key: Key; readonly chain: Chain }
  /** Load the snapshots' indexes of `chain`; answer `IndexesLoaded` or `IndexesFailed`. */
  | { readonly _tag: "LoadIndexes"; readonly chain: Chain }
  | { readonly _tag: "Reply"; readonly id: number; readonly reply: CoreReply }
  | { readonly _tag: "WakeAt"; readonly atMs: number }
  /** n − i_k ≥ B (or a writer waits at (1+ε)B): the snapshotter should look at the state log. */
  | { readonly _tag: "SnapshotDue" }
  /** Read the state log and hand its new records in (`StateRecords`). */
  | { readonly _tag: "SyncStateLog" }
  | { readonly _tag: "Note"; readonly note: CoreNote }

type Rider =
  | { readonly _tag: "Ride"; readonly id: number }
  | { readonly _tag: "Get"; readonly id: number; readonly key: Key; readonly attempt: number; readonly max: number }
  | { readonly _tag: "Writer"; readonly seq: number }

interface Pending {
  readonly id: number
  readonly intention: Intention
  readonly bytes: number
}

interface Batch {
  readonly seq: number
  readonly items: ReadonlyArray<Pending>
  /**
   * append: ready to append; appending: an append is out; sync: waiting for a tail sync; backoff: waiting
   * until `untilMs` (then a sync); admission: waiting for the chain to grow (the timely bound).
   */
  phase: "append" | "appending" | "sync" | "backoff" | "admission"
  untilMs: number
  attempt: number
  /** An append was sent: a failure from here on leaves the outcome to the log. */
  attempted: boolean
  /** It has waited at the timely bound (counted once). */
  waited: boolean
  /** Tail syncs that failed in a row while this batch waited on them. */
  syncFailures: number
  entry: CommandEntry | undefined
}

interface Sync {
  readonly id: number
  readonly riders: ReadonlyArray<Rider>
  /** Entries read that wait for their history (`LoadHistory`). */
  held: { readonly entries: ReadonlyArray<CommandEntry>; readonly atTail: boolean } | undefined
}

interface OpenRead {
  readonly key: Key
  readonly snapshot: number
  /** For a `Get`: its attempt and bound (a move rides the next bus). */
  readonly get: { readonly attempt: number; readonly max: number } | undefined
  lookups: number
}

/** Syncs a writer waits through, failing in a row, before its batch fails. */
const MAX_SYNC_FAILURES = 20
/** Lookups of one read that may find a segment merged away before the read fails. */
const MAX_LOOKUPS = 4
/** How often a writer held at the timely bound looks at the state log again. */
const ADMISSION_POLL_MS = 50

export interface CoreCounters {
  syncs: number
  appends: number
  appendConflicts: number
  committed: number
  aborted: number
  waitsOnInvariant: number
}

type Request = Extract<CoreInput, { readonly _tag: "Ride" | "Get" | "Read" | "Submit" }>

const isRequest = (input: CoreInput): input is Request =>
  input._tag === "Ride" || input._tag === "Get" || input._tag === "Read" || input._tag === "Submit"

export class ClientCore {
  readonly state: ClientState
  readonly variant: CoreVariant
  readonly counters: CoreCounters = {
    syncs: 0,
    appends: 0,
    appendConflicts: 0,
    committed: 0,
    aborted: 0,
    waitsOnInvariant: 0
  }
  /** Index of the last entry this incarnation appended (-1: none yet). */
  lastOwnEntry = -1
  /** A batch of this client waits at the timely bound (its writer takes on the snapshot). */
  admitting = false

  private now = 0
  private out: Array<CoreEffect> = []
  private boarding: Array<Rider> = []
  private sync: Sync | undefined
  private syncSeq = 0
  private lastDepartureMs = Number.NEGATIVE_INFINITY
  private wakeAt = Number.POSITIVE_INFINITY
  private pending: Array<Pending> = []
  private batch: Batch | undefined
  private batchSeq = 0
  private readonly ownBatches = new Map<number, ReadonlyArray<Outcome>>()
  private readonly reads = new Map<number, OpenRead>()
  private loading: Chain | undefined
  private failure: CoreFailure | undefined

  constructor(
    readonly params: CoreParams,
    /** What a cold start read from the state log: reads start on its chain, replay from the chain's end. */
    view: StateView
  ) {
    this.variant = params.variant ?? STANDARD_VARIANT
    this.state = new ClientState(this.variant)
    this.state.view = view
    this.state.start(params.config, view.chain)
  }

  /** Entries applied: the tail this client has reached. */
  get next(): number {
    return this.state.next
  }

  /** Why every request fails now (closed, or the store is corrupt), if it does. */
  get failed(): CoreFailure | undefined {
    return this.failure
  }

  /** Snapshot duty: this client's own commands are not materialised yet, or its writer waits on the bound. */
  get hasSnapshotDuty(): boolean {
    return this.lastOwnEntry >= chainEnd(this.state.view.chain) || this.admitting
  }

  /** Takes one input at time `nowMs`; returns the effects to perform, in order. */
  step(nowMs: number, input: CoreInput): ReadonlyArray<CoreEffect> {
    this.now = Math.max(this.now, nowMs)
    this.out = []
    this.handle(input)
    this.pumpBus()
    const out = this.out
    this.out = []
    return out
  }

  private emit(effect: CoreEffect) {
    this.out.push(effect)
  }

  private reply(id: number, reply: CoreReply) {
    this.emit({ _tag: "Reply", id, reply })
  }

  private note(note: CoreNote) {
    this.emit({ _tag: "Note", note })
  }

  private handle(input: CoreInput) {
    if (this.failure !== undefined && isRequest(input)) {
      return this.reply(input.id, { _tag: "Failed", failure: this.failure })
    }
    switch (input._tag) {
      case "Ride":
        return this.board({ _tag: "Ride", id: input.id })
      case "Get":
        if (!this.variant.getRidesBus) return this.readAt(input.id, input.key, this.state.next, undefined)
        return this.board({ _tag: "Get", id: input.id, key: input.key, attempt: 1, max: input.maxAttempts })
      case "Read":
        return this.readAt(input.id, input.key, input.snapshot, undefined)
      case "Looked":
        return this.looked(input.id, input.chain, input.state)
      case "LookFailed": {
        const read = this.reads.get(input.id)
        if (read === undefined) return
        if (input.again && read.lookups < MAX_LOOKUPS) {
          read.lookups++
          return this.emit({ _tag: "Lookup", id: input.id, key: read.key, chain: this.state.adopted })
        }
        this.reads.delete(input.id)
        return this.reply(input.id, { _tag: "Failed", failure: input.failure })
      }
      case "Submit":
        return this.submit(input.id, input.intention, input.bytes)
      case "LogRead":
        return this.logRead(input.sync, input.from, input.entries, input.atTail)
      case "LogReadFailed":
        if (this.sync?.id !== input.sync) return
        if (input.failure._tag === "Corrupt") this.fatal(input.failure)
        return this.arrive(input.failure)
      case "History": {
        const sync = this.sync
        if (sync?.id !== input.sync || sync.held === undefined) return
        const { entries, atTail } = sync.held
        sync.held = undefined
        this.applyRead(entries, atTail, input.lastModified)
        return
      }
      case "Appended":
        return this.appended(input.seq, input.index)
      case "AppendFailed":
        return this.appendFailed(input.seq, input.kind, input.failure)
      case "StateRecords": {
        const changed = this.state.applyStateRecords(input.records, this.now)
        this.checkAdoption()
        if (changed && this.batch?.phase === "admission") this.waitForSync(this.batch)
        return
      }
      case "IndexesLoaded":
        if (this.loading !== input.chain) return
        this.loading = undefined
        if (this.state.adopt(input.chain)) this.note({ _tag: "Adopted", chain: input.chain })
        return this.checkAdoption()
      case "IndexesFailed":
        if (this.loading !== input.chain) return
        this.loading = undefined
        // A newer chain may have replaced it (its segments merged away): that one. The same chain waits for
        // the next state records or progress.
        if (this.state.adoptable() !== input.chain) this.checkAdoption()
        return
      case "Tick":
        return this.tick()
      case "Close":
        return this.fatal({ _tag: "Closed" })
    }
  }

  // ---- the bus stand -----------------------------------------------------------------------------------------

  private board(rider: Rider) {
    this.boarding.push(rider)
  }

  /** A bus leaves when riders wait, none is out and the gap since the last one has passed. */
  private pumpBus() {
    if (this.sync !== undefined || this.boarding.length === 0 || this.failure !== undefined) return
    const due = this.lastDepartureMs + this.params.minSyncGapMs
    if (this.now < due) return this.wake(due)
    const sync: Sync = { id: ++this.syncSeq, riders: this.boarding, held: undefined }
    this.boarding = []
    this.sync = sync
    this.lastDepartureMs = this.now
    this.counters.syncs++
    this.note({ _tag: "BusDeparted", sync: sync.id, riders: sync.riders.length })
    this.emit({ _tag: "ReadLog", sync: sync.id, from: this.state.next, max: this.params.readRecords, first: true })
  }

  private wake(atMs: number) {
    if (this.wakeAt <= atMs && this.wakeAt > this.now) return
    this.wakeAt = atMs
    this.emit({ _tag: "WakeAt", atMs })
  }

  private logRead(syncId: number, from: number, entries: ReadonlyArray<CommandEntry>, atTail: boolean) {
    const sync = this.sync
    if (sync?.id !== syncId || sync.held !== undefined) return
    // Entries before the tail were applied meanwhile (this client's own append): skip them.
    const fresh = entries.filter((e) => e.index >= this.state.next)
    if (fresh.length > 0 && fresh[0]!.index !== this.state.next) {
      const failure: CoreFailure = {
        _tag: "Corrupt",
        reason: `a log read from ${from} gave entry ${fresh[0]!.index} when ${this.state.next} was next`
      }
      this.fatal(failure)
      return this.arrive(failure)
    }
    const keys = this.state.replay.historyNeeded(fresh)
    if (keys.length > 0) {
      sync.held = { entries: fresh, atTail }
      return this.emit({ _tag: "LoadHistory", sync: sync.id, keys, chain: this.state.adopted })
    }
    this.applyRead(fresh, atTail, undefined)
  }

  private applyRead(
    entries: ReadonlyArray<CommandEntry>,
    atTail: boolean,
    history: ReadonlyMap<Key, Ts | undefined> | undefined
  ) {
    for (const entry of entries) {
      // An own append may have applied it while the history was loading.
      if (entry.index < this.state.next) continue
      this.apply(entry, history)
    }
    if (atTail) return this.arrive(undefined)
    this.emit({
      _tag: "ReadLog",
      sync: this.sync!.id,
      from: this.state.next,
      max: this.params.readRecords,
      first: false
    })
  }

  /** The bus is back (or failed): every rider learns the tail it checked. */
  private arrive(failure: CoreFailure | undefined) {
    const sync = this.sync!
    this.sync = undefined
    const tail = this.state.next
    this.note({ _tag: "BusArrived", sync: sync.id, tail, ok: failure === undefined })
    for (const rider of sync.riders) {
      switch (rider._tag) {
        case "Ride":
          this.reply(rider.id, failure === undefined ? { _tag: "Tail", tail } : { _tag: "Failed", failure })
          break
        case "Get":
          if (failure !== undefined) this.reply(rider.id, { _tag: "Failed", failure })
          else this.readAt(rider.id, rider.key, tail, { attempt: rider.attempt, max: rider.max })
          break
        case "Writer":
          if (this.batch?.seq === rider.seq) this.writerSynced(this.batch, failure)
          break
      }
    }
    this.afterProgress()
  }

  /** After the tail moved: a chain may be adoptable, a snapshot due. */
  private afterProgress() {
    this.checkAdoption()
    if (this.params.snapshots && this.state.snapshotDue(this.params.config.timely)) this.emit({ _tag: "SnapshotDue" })
  }

  private apply(entry: CommandEntry, history?: ReadonlyMap<Key, Ts | undefined>) {
    const outcomes = this.state.applyEntry(entry, history)
    for (const o of outcomes) {
      if (o._tag === "Committed") this.counters.committed++
      else this.counters.aborted++
    }
    if (entry.writer === this.params.writer) {
      this.lastOwnEntry = entry.index
      this.ownBatches.set(entry.batch, outcomes)
    }
    this.note({ _tag: "Applied", entry, outcomes })
  }

  private tick() {
    if (this.now >= this.wakeAt) this.wakeAt = Number.POSITIVE_INFINITY
    const b = this.batch
    if (b !== undefined && (b.phase === "backoff" || b.phase === "admission")) {
      if (this.now >= b.untilMs) {
        if (b.phase === "admission") this.emit({ _tag: "SyncStateLog" })
        this.waitForSync(b)
      } else this.wake(b.untilMs)
    }
  }

  // ---- the read path -----------------------------------------------------------------------------------------

  private readAt(id: number, key: Key, snapshot: number, get: OpenRead["get"]) {
    const read: OpenRead = { key, snapshot, get, lookups: 0 }
    this.reads.set(id, read)
    const tailFirst = this.variant.tailFirst
    this.decided(id, read, tailFirst ? this.state.read(key, snapshot) : { _tag: "Lookup", chain: this.state.adopted })
  }

  private looked(id: number, chain: Chain, state: KeyState | undefined) {
    const read = this.reads.get(id)
    if (read === undefined) return
    if (!this.variant.tailFirst && state !== undefined) {
      // Broken: a snapshot's state wins over a newer one in the tail.
      return this.decided(id, read, this.state.judge(state, read.snapshot))
    }
    this.decided(id, read, this.state.afterLookup(read.key, read.snapshot, chain, state))
  }

  private decided(id: number, read: OpenRead, step: ReturnType<ClientState["read"]>) {
    switch (step._tag) {
      case "Value":
        this.reads.delete(id)
        return this.reply(id, { _tag: "Value", state: step.state, snapshot: read.snapshot })
      case "Lookup":
        return this.emit({ _tag: "Lookup", id, key: read.key, chain: step.chain })
      case "Moved":
        this.reads.delete(id)
        if (read.get === undefined) return this.reply(id, { _tag: "Moved" })
        this.note({ _tag: "SnapshotMoved" })
        if (read.get.attempt >= read.get.max) return this.reply(id, { _tag: "Aborted", attempts: read.get.attempt })
        return this.board({ _tag: "Get", id, key: read.key, attempt: read.get.attempt + 1, max: read.get.max })
    }
  }

  // ---- the writer --------------------------------------------------------------------------------------------

  private submit(id: number, intention: Intention, bytes: number) {
    if (bytes > this.params.maxBatchBytes) {
      return this.reply(id, {
        _tag: "Failed",
        failure: { _tag: "TooLarge", bytes, limitBytes: this.params.maxBatchBytes }
      })
    }
    this.pending.push({ id, intention, bytes })
    this.pumpWriter()
  }

  private pumpWriter() {
    if (this.batch !== undefined || this.pending.length === 0 || this.failure !== undefined) return
    let bytes = 0
    let n = 0
    while (n < this.pending.length && n < this.params.maxBatchIntentions) {
      const next = this.pending[n]!.bytes
      if (n > 0 && bytes + next > this.params.maxBatchBytes) break
      bytes += next
      n++
    }
    this.batch = {
      seq: ++this.batchSeq,
      items: this.pending.splice(0, n),
      phase: "append",
      untilMs: 0,
      attempt: 0,
      attempted: false,
      syncFailures: 0,
      waited: false,
      entry: undefined
    }
    this.tryAppend(this.batch)
  }

  /** The batch's outcomes if its entry is applied, else an append at the tail (or a wait at the bound). */
  private tryAppend(b: Batch) {
    if (this.settle(b)) return
    if (!this.state.admitsNext(this.params.config.timely)) {
      if (!b.waited) this.counters.waitsOnInvariant++
      b.waited = true
      b.phase = "admission"
      b.untilMs = this.now + ADMISSION_POLL_MS
      this.admitting = true
      this.emit({ _tag: "SnapshotDue" })
      this.emit({ _tag: "SyncStateLog" })
      return this.wake(b.untilMs)
    }
    this.admitting = false
    const entry: CommandEntry = {
      index: this.state.next,
      writer: this.params.writer,
      batch: b.seq,
      intentions: b.items.map((p) => p.intention)
    }
    b.phase = "appending"
    b.entry = entry
    b.attempted = true
    this.counters.appends++
    this.emit({ _tag: "Append", seq: b.seq, entry })
    if (this.variant.ackOnSend) {
      // Broken: the commit is acknowledged before the log holds it.
      for (const p of b.items)
        this.reply(p.id, { _tag: "Outcome", outcome: { _tag: "Committed", ts: commitTs(entry.index, 0) } })
    }
  }

  /** True when the batch's entry is applied: its outcomes go out and the next batch starts. */
  private settle(b: Batch): boolean {
    const outcomes = this.ownBatches.get(b.seq)
    if (outcomes === undefined) return false
    this.ownBatches.delete(b.seq)
    this.batch = undefined
    this.admitting = false
    if (!this.variant.ackOnSend) {
      for (const [slot, p] of b.items.entries()) this.reply(p.id, { _tag: "Outcome", outcome: outcomes[slot]! })
    }
    this.pumpWriter()
    return true
  }

  private appended(seq: number, index: number) {
    const b = this.batch
    if (b?.seq !== seq || b.phase !== "appending" || b.entry?.index !== index) return
    if (this.state.next === index && this.state.replay.historyNeeded([b.entry]).length === 0) {
      this.apply(b.entry)
      this.afterProgress()
    }
    // Applied here or by a sync that read it first; else (its history is needed) a sync reads it.
    if (!this.settle(b)) this.waitForSync(b)
  }

  private appendFailed(seq: number, kind: "conflict" | "ambiguous" | "failed", failure: CoreFailure) {
    const b = this.batch
    if (b?.seq !== seq || b.phase !== "appending") return
    b.attempt++
    if (kind === "conflict") {
      this.counters.appendConflicts++
      this.note({ _tag: "AppendConflict" })
      return this.waitForSync(b)
    }
    if (kind === "ambiguous") {
      // It may have landed: only the log can tell. Wait a little (storage may be restarting), then sync.
      b.phase = "backoff"
      b.untilMs = this.now + Math.min(1000, 20 * 2 ** Math.min(b.attempt, 6))
      return this.wake(b.untilMs)
    }
    this.failBatch(b, failure)
  }

  private waitForSync(b: Batch) {
    b.phase = "sync"
    this.board({ _tag: "Writer", seq: b.seq })
  }

  private writerSynced(b: Batch, failure: CoreFailure | undefined) {
    if (b.phase !== "sync") return
    if (failure === undefined) {
      b.syncFailures = 0
      b.phase = "append"
      return this.tryAppend(b)
    }
    if (failure._tag !== "Unavailable" || ++b.syncFailures > MAX_SYNC_FAILURES) return this.failBatch(b, failure)
    b.phase = "backoff"
    b.untilMs = this.now + Math.min(1000, 20 * 2 ** Math.min(b.syncFailures, 6))
    this.wake(b.untilMs)
  }

  private failBatch(b: Batch, failure: CoreFailure) {
    this.batch = undefined
    this.admitting = false
    const f: CoreFailure =
      failure._tag === "Unavailable" && b.attempted ? { ...failure, outcomeUnknown: true } : failure
    for (const p of b.items) this.reply(p.id, { _tag: "Failed", failure: f })
    this.pumpWriter()
  }

  // ---- adoption ----------------------------------------------------------------------------------------------

  /** The view's chain, once the replay reached its end, is adopted after its indexes are loaded. */
  private checkAdoption() {
    if (this.loading !== undefined) return
    const chain = this.state.adoptable()
    if (chain === undefined) return
    this.loading = chain
    this.emit({ _tag: "LoadIndexes", chain })
  }

  // ---- failure -----------------------------------------------------------------------------------------------

  /** Closed, or the store is corrupt: everything waiting fails, and every request from now on. */
  private fatal(failure: CoreFailure) {
    if (this.failure !== undefined) return
    this.failure = failure
    if (failure._tag === "Corrupt") this.note({ _tag: "Fatal", reason: failure.reason })
    for (const rider of this.boarding) {
      if (rider._tag !== "Writer") this.reply(rider.id, { _tag: "Failed", failure })
    }
    this.boarding = []
    if (failure._tag === "Closed" && this.sync !== undefined) {
      for (const rider of this.sync.riders)
        if (rider._tag !== "Writer") this.reply(rider.id, { _tag: "Failed", failure })
      this.sync = undefined
    }
    for (const id of this.reads.keys()) this.reply(id, { _tag: "Failed", failure })
    this.reads.clear()
    const b = this.batch
    this.batch = undefined
    for (const p of [...(b?.items ?? []), ...this.pending]) this.reply(p.id, { _tag: "Failed", failure })
    this.pending = []
  }
}
