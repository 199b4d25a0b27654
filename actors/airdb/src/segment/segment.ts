/**
 * The Segment service (§4.3): the only storage interface AirDB needs. A segment is a bounded, append-only
 * sequence of records with four operations: create it if absent, append a record atomically at the tail
 * (conditional on the tail the writer expects), read records from a position, and read its size (the tail).
 * Layers: NATS JetStream, Redis, Azure Append Blob (Azurite in tests) and an in-memory store for the
 * simulator; all pass one conformance suite (conformance.ts).
 *
 * Positions are the backend's own: a record's index for JetStream, Redis and memory, a byte offset for an
 * append blob. Callers never do arithmetic on them: a record says where the next one starts (`next`), and an
 * append is conditional on the tail the caller last saw.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"

export type SegmentBackend = "memory" | "jetstream" | "redis" | "azure"

export interface SegmentRecord {
  readonly position: number
  /** Position of the record after this one (the tail when this is the last). */
  readonly next: number
  readonly bytes: Uint8Array
}

export interface AppendResult {
  /** Where the record landed: the tail the append was conditional on. */
  readonly position: number
  /** The segment's tail after the append. */
  readonly tail: number
}

export interface ReadOptions {
  /** At most this many records (default 256). */
  readonly maxRecords?: number
  /** Stored bytes of the records wanted, when the caller knows them (a byte-range store reads just those). */
  readonly bytesHint?: number
}

/** Hard limits of a backend; the log layer seals a segment well before them. */
export interface SegmentLimits {
  /** Largest record one append may carry. */
  readonly maxAppendBytes: number
  /** Records one segment can hold. */
  readonly maxRecords: number
  /** Highest tail position one segment can reach (records, or bytes for a byte-addressed store). */
  readonly maxPosition: number
  /** Whether positions count bytes (true) or records (false). */
  readonly byteAddressed: boolean
}

/** The append's condition failed: the segment's tail is not where the writer expected it. */
export class SegmentConflict extends Data.TaggedError("SegmentConflict")<{
  readonly segment: string
  readonly expected: number
  /** The tail the store reported, when it says. */
  readonly actual: number | undefined
}> {
  override get message() {
    return `segment ${this.segment}: append expected the tail at ${this.expected}, it is at ${this.actual ?? "another position"}`
  }
}

export class SegmentNotFound extends Data.TaggedError("SegmentNotFound")<{ readonly segment: string }> {
  override get message() {
    return `segment ${this.segment} does not exist`
  }
}

/** The segment cannot take the record: it would pass the backend's hard limit. */
export class SegmentFull extends Data.TaggedError("SegmentFull")<{
  readonly segment: string
  readonly tail: number
}> {
  override get message() {
    return `segment ${this.segment} is full (tail ${this.tail})`
  }
}

/** A record larger than the backend's maximum append: refused before any storage call. */
export class SegmentRecordTooLarge extends Data.TaggedError("SegmentRecordTooLarge")<{
  readonly segment: string
  readonly bytes: number
  readonly limitBytes: number
}> {
  override get message() {
    return `a ${this.bytes}-byte record exceeds segment ${this.segment}'s ${this.limitBytes}-byte append limit`
  }
}

/** No answer within the deadline. For an append, whether it happened is unknown (read to find out). */
export class SegmentTimeout extends Data.TaggedError("SegmentTimeout")<{
  readonly segment: string
  readonly operation: string
  readonly timeoutMs: number
}> {
  override get message() {
    return `segment ${this.segment}: ${this.operation} got no answer within ${this.timeoutMs} ms`
  }
}

/** The storage call failed (connection lost, server error). For an append, whether it happened is unknown. */
export class SegmentUnavailable extends Data.TaggedError("SegmentUnavailable")<{
  readonly segment: string
  readonly operation: string
  readonly reason: string
}> {
  override get message() {
    return `segment ${this.segment}: ${this.operation} failed: ${this.reason}`
  }
}

/** Stored bytes that are not a valid record (bad framing or checksum): never handed on as data. */
export class SegmentCorrupt extends Data.TaggedError("SegmentCorrupt")<{
  readonly segment: string
  readonly position: number
  readonly reason: string
}> {
  override get message() {
    return `segment ${this.segment} at ${this.position} is corrupt: ${this.reason}`
  }
}

/** A segment name outside `[A-Za-z0-9_-]{1,96}` (every backend can store those as they are). */
export class InvalidSegmentName extends Data.TaggedError("InvalidSegmentName")<{ readonly segment: string }> {
  override get message() {
    return `invalid segment name ${JSON.stringify(this.segment)}: use 1-96 of [A-Za-z0-9_-]`
  }
}

/** Failures that may go away on a retry: the outcome of an append that failed this way is unknown. */
export type SegmentTransient = SegmentTimeout | SegmentUnavailable

export type CreateError = SegmentTransient | InvalidSegmentName
export type AppendError =
  | SegmentConflict
  | SegmentNotFound
  | SegmentFull
  | SegmentRecordTooLarge
  | SegmentTransient
  | InvalidSegmentName
export type ReadError = SegmentNotFound | SegmentCorrupt | SegmentTransient | InvalidSegmentName
export type SegmentError = AppendError | ReadError

export interface SegmentStoreShape {
  readonly backend: SegmentBackend
  readonly limits: SegmentLimits
  /** Creates an empty segment unless it exists; true when this call created it. */
  readonly create: (segment: string) => Effect.Effect<boolean, CreateError>
  /** Appends one record at `expectedTail`, atomically, or fails with SegmentConflict. */
  readonly append: (
    segment: string,
    expectedTail: number,
    bytes: Uint8Array
  ) => Effect.Effect<AppendResult, AppendError>
  /** Records from `from` (a record's position or the tail) in order; empty at the tail. */
  readonly read: (
    segment: string,
    from: number,
    options?: ReadOptions
  ) => Effect.Effect<ReadonlyArray<SegmentRecord>, ReadError>
  /** The segment's tail position. */
  readonly size: (segment: string) => Effect.Effect<number, ReadError>
  /** Deletes the segment (and everything in it); absent is fine. For tests, benchmarks and garbage. */
  readonly remove: (segment: string) => Effect.Effect<void, SegmentTransient | InvalidSegmentName>
}

export class SegmentStore extends Context.Tag("@reef/airdb/SegmentStore")<SegmentStore, SegmentStoreShape>() {}

const SEGMENT_NAME = /^[A-Za-z0-9_-]{1,96}$/

export const isValidSegmentName = (segment: string): boolean => SEGMENT_NAME.test(segment)

export const DEFAULT_READ_RECORDS = 256
