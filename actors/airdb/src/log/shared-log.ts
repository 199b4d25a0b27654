/**
 * The shared log on finite segments (§4.3, "Infinite log on finite blobs"): "the shared log consists of one or
 * more ordered segments ... A new segment is added if the last one fills up. New commands append to the last
 * segment, called the tail segment. The overall structure ... is recorded in the special meta segment ... Any
 * AirDB library can add a segment as the new tail. To do so, it first creates a new segment with a unique
 * name, and then updates the meta segment." Meta segments have static names: <log>-m0, <log>-m1, ...
 *
 * Every append is conditional on the tail, so a writer always knows the index of what it appends. A segment
 * is sealed once it holds the layout's number of records (or, for a byte-addressed store, once another
 * maximal record might not fit): every writer computes the same seal from the same tail, so no record can
 * land in a segment after its successor was added.
 */
import { randomBytes } from "node:crypto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { LogLocation } from "../core/chain.js"
import { FRAME_HEADER_BYTES } from "../segment/framing.js"
import {
  type AppendError,
  type CreateError,
  type ReadError,
  SegmentConflict,
  type SegmentStoreShape
} from "../segment/segment.js"
import { CorruptRecord, decodeSegmentAdded, encodeSegmentAdded, type SegmentAdded } from "./record-codec.js"

/** A byte-addressed segment is sealed before this many bytes (the store's hard limit must exceed it). */
export const SEGMENT_SEAL_BYTES = 256 * 1024 * 1024

/** The log's structure contradicts itself (a meta record out of order): a bug or foreign data, never retried. */
export class LogStructureError extends Data.TaggedError("LogStructureError")<{
  readonly log: string
  readonly reason: string
}> {
  override get message() {
    return `shared log ${this.log}: ${this.reason}`
  }
}

export type LogError = ReadError | CreateError | CorruptRecord | LogStructureError
export type LogAppendError = AppendError | CreateError | LogError

export interface LogSpec {
  readonly store: SegmentStoreShape
  /** Name prefix of the log's segments (`<store>-c` for the command log). */
  readonly prefix: string
  readonly segmentRecords: number
  readonly metaRecords: number
  /** Records a new segment starts with before it is published (the state log's checkpoint), by first index. */
  readonly firstRecords?: (firstIndex: number) => ReadonlyArray<Uint8Array>
  /** Retries of a storage call that timed out or failed (reads; appends are retried at the same position). */
  readonly retry?: Schedule.Schedule<unknown, unknown>
}

export interface LogCursor {
  readonly ordinal: number
  readonly segment: string
  /** Where the next record is (or will be appended) in the segment. */
  readonly position: number
  /** The next record's index in the log. */
  readonly index: number
}

export interface LogRecord {
  readonly bytes: Uint8Array
  readonly index: number
  readonly segment: string
  readonly location: LogLocation
}

const isTransient = (e: { readonly _tag: string }) => e._tag === "SegmentTimeout" || e._tag === "SegmentUnavailable"

export const DEFAULT_RETRY: Schedule.Schedule<unknown, unknown> = Schedule.exponential("20 millis", 2).pipe(
  Schedule.union(Schedule.spaced("1 second")),
  Schedule.compose(Schedule.recurs(8))
)

/**
 * Appends to a segment only this writer appends to (a new segment before it is published, a snapshot's
 * segment), retrying transient failures. A conflict can then only be this writer's own earlier attempt that
 * landed after all: the record is there, and the tail is past it.
 */
export const appendOwned = (
  store: SegmentStoreShape,
  segment: string,
  position: number,
  bytes: Uint8Array
): Effect.Effect<{ readonly position: number; readonly tail: number }, AppendError> =>
  Effect.retry(store.append(segment, position, bytes), { schedule: DEFAULT_RETRY, while: isTransient }).pipe(
    Effect.catchTag("SegmentConflict", (conflict) =>
      Effect.map(
        conflict.actual === undefined
          ? Effect.retry(store.size(segment), { schedule: DEFAULT_RETRY, while: isTransient })
          : Effect.succeed(conflict.actual),
        (tail) => ({ position, tail })
      ).pipe(
        Effect.catchAll(() => Effect.fail(conflict)),
        Effect.filterOrFail(
          (r) => r.tail > position,
          () => conflict
        )
      )
    )
  )

export const locationOf = (cursor: LogCursor): LogLocation => ({
  ordinal: cursor.ordinal,
  position: cursor.position,
  index: cursor.index
})

/** One client's handle on one shared log: the segments it knows and how to read and append across them. */
export class SharedLog {
  readonly segments: Array<SegmentAdded> = []
  private meta = 0
  private metaPosition = 0
  private metaCount = 0
  private readonly retry: Schedule.Schedule<unknown, unknown>

  constructor(readonly spec: LogSpec) {
    this.retry = spec.retry ?? DEFAULT_RETRY
  }

  private metaName(k: number): string {
    return `${this.spec.prefix}-m${k}`
  }

  private retried<A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> {
    return Effect.retry(effect, { schedule: this.retry, while: isTransient })
  }

  /** Reads meta records it has not seen; true when segments were added. */
  refreshMeta(): Effect.Effect<boolean, LogError> {
    const self = this
    return Effect.gen(function* () {
      const before = self.segments.length
      for (;;) {
        const name = self.metaName(self.meta)
        const records = yield* self
          .retried(self.spec.store.read(name, self.metaPosition, { maxRecords: self.spec.metaRecords }))
          .pipe(Effect.catchTag("SegmentNotFound", () => Effect.succeed([])))
        for (const r of records) {
          const added = decodeSegmentAdded(r.bytes, name, r.position)
          if (added instanceof CorruptRecord) return yield* added
          if (added.ordinal !== self.segments.length) {
            return yield* new LogStructureError({
              log: self.spec.prefix,
              reason: `meta record for segment ${added.ordinal} where ${self.segments.length} was next`
            })
          }
          self.segments.push(added)
          self.metaPosition = r.next
          self.metaCount++
        }
        if (self.metaCount < self.spec.metaRecords) break
        self.meta++
        self.metaPosition = 0
        self.metaCount = 0
      }
      return self.segments.length > before
    })
  }

  /** Creates the log if nobody has (meta segment and first segment); idempotent, safe to race. */
  ensureCreated(): Effect.Effect<void, LogAppendError> {
    const self = this
    return Effect.gen(function* () {
      yield* self.retried(self.spec.store.create(self.metaName(0)))
      yield* self.refreshMeta()
      if (self.segments.length === 0) yield* self.addSegment(0, 0)
    })
  }

  startCursor(): LogCursor {
    const first = this.segments[0]
    if (first === undefined) throw new Error(`log ${this.spec.prefix} has no segment yet (ensureCreated first)`)
    return { ordinal: 0, segment: first.segment, position: 0, index: 0 }
  }

  cursorAt(location: LogLocation): Effect.Effect<LogCursor, LogError> {
    const self = this
    return Effect.gen(function* () {
      if (self.segments[location.ordinal] === undefined) yield* self.refreshMeta()
      const s = self.segments[location.ordinal]
      if (s === undefined) {
        return yield* new LogStructureError({ log: self.spec.prefix, reason: `no segment ${location.ordinal}` })
      }
      return { ordinal: location.ordinal, segment: s.segment, position: location.position, index: location.index }
    })
  }

  /** Cursor at the start of the last known segment (the state log's cold start reads only that one). */
  lastSegmentCursor(): LogCursor {
    const last = this.segments.at(-1)
    if (last === undefined) throw new Error(`log ${this.spec.prefix} has no segment yet`)
    return { ordinal: last.ordinal, segment: last.segment, position: 0, index: last.firstIndex }
  }

  /** Whether no record may be appended at `cursor` any more (the same answer for every writer). */
  isSealed(cursor: LogCursor): boolean {
    const first = this.segments[cursor.ordinal]!.firstIndex
    if (cursor.index - first >= this.spec.segmentRecords) return true
    const limits = this.spec.store.limits
    return limits.byteAddressed && cursor.position + limits.maxAppendBytes + FRAME_HEADER_BYTES > SEGMENT_SEAL_BYTES
  }

  /**
   * Records from `cursor` on, at most `maxRecords`, crossing into the next segment when this one is sealed
   * and read to its end. Empty at the log's tail. `untilPosition`: the segment's tail when the caller knows
   * it (a store that reads by byte range then reads just what is there).
   */
  read(
    cursor: LogCursor,
    maxRecords: number,
    untilPosition?: number
  ): Effect.Effect<{ readonly records: ReadonlyArray<LogRecord>; readonly cursor: LogCursor }, LogError> {
    const self = this
    return Effect.gen(function* () {
      let c = cursor
      for (;;) {
        const limits = self.spec.store.limits
        const known =
          untilPosition !== undefined && c.segment === cursor.segment ? untilPosition - c.position : undefined
        const got = yield* self.retried(
          self.spec.store.read(c.segment, c.position, {
            maxRecords: limits.byteAddressed || known === undefined ? maxRecords : Math.min(maxRecords, known),
            ...(limits.byteAddressed && known !== undefined && known > 0 ? { bytesHint: known } : {})
          })
        )
        if (got.length > 0) {
          const records: Array<LogRecord> = []
          for (const r of got) {
            records.push({
              bytes: r.bytes,
              index: c.index,
              segment: c.segment,
              location: { ordinal: c.ordinal, position: r.position, index: c.index }
            })
            c = { ...c, position: r.next, index: c.index + 1 }
          }
          return { records, cursor: c }
        }
        if (!self.isSealed(c)) return { records: [], cursor: c }
        if (self.segments[c.ordinal + 1] === undefined) yield* self.refreshMeta()
        const next = self.segments[c.ordinal + 1]
        if (next === undefined) return { records: [], cursor: c }
        if (next.firstIndex !== c.index) {
          return yield* new LogStructureError({
            log: self.spec.prefix,
            reason: `segment ${next.ordinal} starts at index ${next.firstIndex}, the sealed one ended at ${c.index}`
          })
        }
        c = { ordinal: next.ordinal, segment: next.segment, position: 0, index: next.firstIndex }
      }
    })
  }

  /** The tail position of the cursor's segment (one storage call: a tail check). */
  size(cursor: LogCursor): Effect.Effect<number, LogError> {
    return this.retried(this.spec.store.size(cursor.segment))
  }

  /**
   * Appends `bytes` as the record at `cursor`, which must be the log's tail as the caller knows it. A conflict
   * means the log grew (or this call added a segment): the caller reads on and tries again. A transient
   * failure is retried at the same position, so the record lands at most once.
   */
  append(cursor: LogCursor, bytes: Uint8Array): Effect.Effect<LogCursor, LogAppendError> {
    const self = this
    return Effect.gen(function* () {
      if (self.isSealed(cursor)) {
        if (self.segments[cursor.ordinal + 1] === undefined) yield* self.refreshMeta()
        if (self.segments[cursor.ordinal + 1] === undefined) yield* self.addSegment(cursor.ordinal + 1, cursor.index)
        // The tail is in the next segment now: the caller reads on (it may hold records already).
        return yield* new SegmentConflict({ segment: cursor.segment, expected: cursor.position, actual: undefined })
      }
      const r = yield* self.retried(self.spec.store.append(cursor.segment, cursor.position, bytes))
      return { ...cursor, position: r.tail, index: cursor.index + 1 }
    })
  }

  /** Creates segment `ordinal` starting at log index `firstIndex` and publishes it in the meta segment. */
  private addSegment(ordinal: number, firstIndex: number): Effect.Effect<void, LogAppendError> {
    const self = this
    return Effect.gen(function* () {
      const segment = `${self.spec.prefix}-${ordinal}-${randomBytes(6).toString("hex")}`
      yield* self.retried(self.spec.store.create(segment))
      let position = 0
      for (const record of self.spec.firstRecords?.(firstIndex) ?? []) {
        position = (yield* appendOwned(self.spec.store, segment, position, record)).tail
      }
      while (self.segments[ordinal] === undefined) {
        // refreshMeta moves on to the next meta segment once one is full; the first writer there creates it.
        if (self.metaPosition === 0) yield* self.retried(self.spec.store.create(self.metaName(self.meta)))
        yield* self
          .retried(
            self.spec.store.append(
              self.metaName(self.meta),
              self.metaPosition,
              encodeSegmentAdded({ ordinal, segment, firstIndex })
            )
          )
          .pipe(Effect.catchTag("SegmentConflict", () => Effect.void))
        // Ours or another client's: the segment list only grows through refreshMeta.
        yield* self.refreshMeta()
      }
      // Another client added this ordinal first: ours was never published, so nobody reads it.
      if (self.segments[ordinal]!.segment !== segment) {
        yield* Effect.ignore(self.spec.store.remove(segment))
      }
    })
  }
}
