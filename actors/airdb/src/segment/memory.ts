/**
 * The in-memory segment store: the simulator's storage and the fastest way to test the layers above. One
 * `MemorySegments` can back several clients (each with its own layer), like one bucket shared by processes.
 */

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { appendOutcome, precheck, readOutcome, sizeOutcome } from "./raw-store.js"
import {
  DEFAULT_READ_RECORDS,
  InvalidSegmentName,
  isValidSegmentName,
  type SegmentLimits,
  type SegmentRecordTooLarge,
  SegmentStore,
  type SegmentStoreShape
} from "./segment.js"

export const MEMORY_LIMITS: SegmentLimits = {
  maxAppendBytes: 4 * 1024 * 1024,
  maxRecords: 1_000_000,
  maxPosition: 1_000_000,
  byteAddressed: false
}

/** The shared contents: segment name to its records. Copies what it stores, so callers may reuse buffers. */
export class MemorySegments {
  private readonly segments = new Map<string, Array<Uint8Array>>()

  constructor(readonly limits: SegmentLimits = MEMORY_LIMITS) {}

  has(segment: string): boolean {
    return this.segments.has(segment)
  }

  records(segment: string): ReadonlyArray<Uint8Array> | undefined {
    return this.segments.get(segment)
  }

  names(): ReadonlyArray<string> {
    return [...this.segments.keys()]
  }

  totalBytes(): number {
    let sum = 0
    for (const records of this.segments.values()) for (const r of records) sum += r.byteLength
    return sum
  }

  create(segment: string): boolean {
    if (this.segments.has(segment)) return false
    this.segments.set(segment, [])
    return true
  }

  /** Replaces a stored record's bytes (tests of corrupted entries). */
  overwrite(segment: string, position: number, bytes: Uint8Array): void {
    const records = this.segments.get(segment)
    if (records === undefined || position >= records.length) throw new Error(`no record ${segment}@${position}`)
    records[position] = Uint8Array.from(bytes)
  }

  append(segment: string, expectedTail: number, bytes: Uint8Array) {
    const records = this.segments.get(segment)
    if (records === undefined) return { _tag: "NotFound" } as const
    if (records.length !== expectedTail) return { _tag: "Conflict", actual: records.length } as const
    if (records.length >= this.limits.maxRecords) return { _tag: "Full", tail: records.length } as const
    records.push(Uint8Array.from(bytes))
    return { _tag: "Appended", result: { position: expectedTail, tail: records.length } } as const
  }

  read(segment: string, from: number, maxRecords: number) {
    const records = this.segments.get(segment)
    if (records === undefined) return { _tag: "NotFound" } as const
    const out = records.slice(from, from + maxRecords).map((bytes, i) => ({
      position: from + i,
      next: from + i + 1,
      bytes
    }))
    return { _tag: "Records", records: out } as const
  }

  size(segment: string) {
    const records = this.segments.get(segment)
    return records === undefined ? ({ _tag: "NotFound" } as const) : ({ _tag: "Size", tail: records.length } as const)
  }

  remove(segment: string): void {
    this.segments.delete(segment)
  }
}

/**
 * A store over `contents` that answers synchronously (no deadline: memory never hangs). The simulator wraps it
 * to add delays and failures.
 */
export const makeMemorySegmentStore = (contents: MemorySegments = new MemorySegments()): SegmentStoreShape => {
  const limits = contents.limits
  const checked = <A, E>(
    segment: string,
    f: () => Effect.Effect<A, E>,
    bytes?: Uint8Array
  ): Effect.Effect<A, E | InvalidSegmentName | SegmentRecordTooLarge> =>
    Effect.suspend((): Effect.Effect<A, E | InvalidSegmentName | SegmentRecordTooLarge> => {
      const refused = precheck(segment, limits, bytes)
      return refused === undefined ? f() : Effect.fail(refused)
    })
  const named = <A, E>(segment: string, f: () => Effect.Effect<A, E>): Effect.Effect<A, E | InvalidSegmentName> =>
    Effect.suspend(
      (): Effect.Effect<A, E | InvalidSegmentName> =>
        isValidSegmentName(segment) ? f() : Effect.fail(new InvalidSegmentName({ segment }))
    )
  return {
    backend: "memory",
    limits,
    create: (segment) => named(segment, () => Effect.sync(() => contents.create(segment))),
    append: (segment, expectedTail, bytes) =>
      checked(
        segment,
        () => appendOutcome(segment, expectedTail, contents.append(segment, expectedTail, bytes)),
        bytes
      ),
    read: (segment, from, options = {}) =>
      named(segment, () =>
        readOutcome(segment, contents.read(segment, from, Math.max(1, options.maxRecords ?? DEFAULT_READ_RECORDS)))
      ),
    size: (segment) => named(segment, () => sizeOutcome(segment, contents.size(segment))),
    remove: (segment) => named(segment, () => Effect.sync(() => contents.remove(segment)))
  }
}

export const memorySegmentLayer = (contents: MemorySegments = new MemorySegments()): Layer.Layer<SegmentStore> =>
  Layer.succeed(SegmentStore, makeMemorySegmentStore(contents))
