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

export const makeSegmentStore = (spec: StoreSpec): SegmentStoreShape => {
  const call = <A>(segment: string, operation: string, f: (signal: AbortSignal) => Promise<A>) =>
    Effect.suspend(() =>
      isValidSegmentName(segment) ? Effect.void : Effect.fail(new InvalidSegmentName({ segment }))
    ).pipe(
      Effect.zipRight(
        Effect.tryPromise({
          try: f,
          catch: (cause) => new SegmentUnavailable({ segment, operation, reason: reasonOf(cause) })
        })
      ),
      Effect.timeoutFail({
        duration: spec.timeoutMs,
        onTimeout: () => new SegmentTimeout({ segment, operation, timeoutMs: spec.timeoutMs })
      })
    )

  return {
    backend: spec.backend,
    limits: spec.limits,
    create: (segment) => call(segment, "create", (signal) => spec.raw.create(segment, signal)),
    append: (segment, expectedTail, bytes) =>
      bytes.byteLength > spec.limits.maxAppendBytes
        ? Effect.fail(
            new SegmentRecordTooLarge({ segment, bytes: bytes.byteLength, limitBytes: spec.limits.maxAppendBytes })
          )
        : Effect.flatMap(
            call(segment, "append", (signal) => spec.raw.append(segment, expectedTail, bytes, signal)),
            (r): Effect.Effect<AppendResult, AppendError> => {
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
        ),
        (r): Effect.Effect<ReadonlyArray<SegmentRecord>, ReadError> => {
          switch (r._tag) {
            case "Records":
              return Effect.succeed(r.records)
            case "NotFound":
              return Effect.fail(new SegmentNotFound({ segment }))
            case "Corrupt":
              return Effect.fail(new SegmentCorrupt({ segment, position: r.position, reason: r.reason }))
          }
        }
      ),
    size: (segment) =>
      Effect.flatMap(
        call(segment, "size", (signal) => spec.raw.size(segment, signal)),
        (r) => (r._tag === "Size" ? Effect.succeed(r.tail) : Effect.fail(new SegmentNotFound({ segment })))
      ),
    remove: (segment) => call(segment, "remove", (signal) => spec.raw.remove(segment, signal))
  }
}
