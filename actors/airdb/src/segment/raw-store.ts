/**
 * What every backend has in common, written once: a backend supplies its raw operations as promises that
 * resolve to plain outcomes (a conflict, a missing segment, a full one) and throw only on a failed call;
 * `makeSegmentStore` turns them into the SegmentStore service: names checked, oversized records refused
 * before any call, a deadline on every call (SegmentTimeout), a thrown failure as SegmentUnavailable.
 */
import * as Effect from "effect/Effect"
import {
  type AppendError,
  type AppendResult,
  type CreateError,
  DEFAULT_READ_RECORDS,
  InvalidSegmentName,
  isValidSegmentName,
  type ReadError,
  type SegmentBackend,
  SegmentConflict,
  SegmentCorrupt,
  SegmentFull,
  type SegmentLimits,
  SegmentNotFound,
  type SegmentRecord,
  SegmentRecordTooLarge,
  type SegmentStoreShape,
  SegmentTimeout,
  SegmentUnavailable
} from "./segment.js"

export type RawAppend =
  | { readonly _tag: "Appended"; readonly result: AppendResult }
  | { readonly _tag: "Conflict"; readonly actual: number | undefined }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "Full"; readonly tail: number }

export type RawRead =
  | { readonly _tag: "Records"; readonly records: ReadonlyArray<SegmentRecord> }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "Corrupt"; readonly position: number; readonly reason: string }

export type RawSize = { readonly _tag: "Size"; readonly tail: number } | { readonly _tag: "NotFound" }

export interface RawSegmentOps {
  readonly create: (segment: string, signal: AbortSignal) => Promise<boolean>
  readonly append: (segment: string, expectedTail: number, bytes: Uint8Array, signal: AbortSignal) => Promise<RawAppend>
  readonly read: (
    segment: string,
    from: number,
    maxRecords: number,
    bytesHint: number | undefined,
    signal: AbortSignal
  ) => Promise<RawRead>
  readonly size: (segment: string, signal: AbortSignal) => Promise<RawSize>
  readonly remove: (segment: string, signal: AbortSignal) => Promise<void>
}

export interface StoreSpec {
  readonly backend: SegmentBackend
  readonly limits: SegmentLimits
  /** Deadline of one storage call. */
  readonly timeoutMs: number
  readonly raw: RawSegmentOps
}

export const DEFAULT_CALL_TIMEOUT_MS = 5_000

const reasonOf = (cause: unknown): string =>
  cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause ?? "unknown failure")

interface Pending {
  readonly deadlineMs: number
  readonly expire: () => void
}

/**
 * Deadlines of storage calls, checked by one unref'd interval timer: a timer per call (or Effect's timeout,
 * a fiber per call) costs more than the call itself on a fast store.
 */
class DeadlineWheel {
  private readonly pending = new Set<Pending>()
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(private readonly tickMs: number) {}

  add(p: Pending): void {
    this.pending.add(p)
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), this.tickMs)
      this.timer.unref()
    }
  }

  delete(p: Pending): void {
    this.pending.delete(p)
  }

  private tick(): void {
    const now = Date.now()
    for (const p of this.pending) {
      if (p.deadlineMs <= now) {
        this.pending.delete(p)
        p.expire()
      }
    }
    if (this.pending.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
}

/** Maps a raw append's outcome to the service's result or typed error. */
export const appendOutcome = (
  segment: string,
  expectedTail: number,
  r: RawAppend
): Effect.Effect<AppendResult, AppendError> => {
  switch (r._tag) {
    case "Appended":
      return Effect.succeed(r.result)
    case "Conflict":
      return Effect.fail(new SegmentConflict({ segment, expected: expectedTail, actual: r.actual }))
    case "NotFound":
      return Effect.fail(new SegmentNotFound({ segment }))
    case "Full":
      return Effect.fail(new SegmentFull({ segment, tail: r.tail }))
  }
}

export const readOutcome = (segment: string, r: RawRead): Effect.Effect<ReadonlyArray<SegmentRecord>, ReadError> => {
  switch (r._tag) {
    case "Records":
      return Effect.succeed(r.records)
    case "NotFound":
      return Effect.fail(new SegmentNotFound({ segment }))
    case "Corrupt":
      return Effect.fail(new SegmentCorrupt({ segment, position: r.position, reason: r.reason }))
  }
}

export const sizeOutcome = (segment: string, r: RawSize): Effect.Effect<number, ReadError> =>
  r._tag === "Size" ? Effect.succeed(r.tail) : Effect.fail(new SegmentNotFound({ segment }))

/** Refuses an invalid name or an oversized record before any storage call. */
export const precheck = (
  segment: string,
  limits: SegmentLimits,
  bytes?: Uint8Array
): InvalidSegmentName | SegmentRecordTooLarge | undefined => {
  if (!isValidSegmentName(segment)) return new InvalidSegmentName({ segment })
  if (bytes !== undefined && bytes.byteLength > limits.maxAppendBytes) {
    return new SegmentRecordTooLarge({ segment, bytes: bytes.byteLength, limitBytes: limits.maxAppendBytes })
  }
  return undefined
}

export const makeSegmentStore = (spec: StoreSpec): SegmentStoreShape => {
  const wheel = new DeadlineWheel(Math.max(10, Math.min(100, spec.timeoutMs / 4)))
  const call = <A>(
    segment: string,
    operation: string,
    f: (signal: AbortSignal) => Promise<A>,
    bytes?: Uint8Array
  ): Effect.Effect<A, SegmentTimeout | SegmentUnavailable | InvalidSegmentName | SegmentRecordTooLarge> => {
    const refused = precheck(segment, spec.limits, bytes)
    if (refused !== undefined) return Effect.fail(refused)
    return Effect.async((resume) => {
      const abort = new AbortController()
      let done = false
      const pending: Pending = {
        deadlineMs: Date.now() + spec.timeoutMs,
        expire: () => {
          if (done) return
          done = true
          abort.abort()
          resume(Effect.fail(new SegmentTimeout({ segment, operation, timeoutMs: spec.timeoutMs })))
        }
      }
      wheel.add(pending)
      f(abort.signal).then(
        (a) => {
          if (done) return
          done = true
          wheel.delete(pending)
          resume(Effect.succeed(a))
        },
        (cause) => {
          if (done) return
          done = true
          wheel.delete(pending)
          resume(Effect.fail(new SegmentUnavailable({ segment, operation, reason: reasonOf(cause) })))
        }
      )
      return Effect.sync(() => {
        done = true
        wheel.delete(pending)
        abort.abort()
      })
    })
  }

  return {
    backend: spec.backend,
    limits: spec.limits,
    create: (segment) =>
      call(segment, "create", (signal) => spec.raw.create(segment, signal)) as Effect.Effect<boolean, CreateError>,
    append: (segment, expectedTail, bytes) =>
      Effect.flatMap(
        call(segment, "append", (signal) => spec.raw.append(segment, expectedTail, bytes, signal), bytes),
        (r) => appendOutcome(segment, expectedTail, r)
      ),
    read: (segment, from, options = {}) =>
      Effect.flatMap(
        call(segment, "read", (signal) =>
          spec.raw.read(
            segment,
            from,
            Math.max(1, options.maxRecords ?? DEFAULT_READ_RECORDS),
            options.bytesHint,
            signal
          )
        ) as Effect.Effect<RawRead, ReadError>,
        (r) => readOutcome(segment, r)
      ),
    size: (segment) =>
      Effect.flatMap(
        call(segment, "size", (signal) => spec.raw.size(segment, signal)) as Effect.Effect<RawSize, ReadError>,
        (r) => sizeOutcome(segment, r)
      ),
    remove: (segment) =>
      call(segment, "remove", (signal) => spec.raw.remove(segment, signal)) as Effect.Effect<
        void,
        SegmentTimeout | SegmentUnavailable | InvalidSegmentName
      >
  }
}
