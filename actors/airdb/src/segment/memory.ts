/**
 * The in-memory segment store: the simulator's storage and the fastest way to test the layers above. One
 * `MemorySegments` can back several clients (each with its own layer), like one bucket shared by processes.
 */
import * as Layer from "effect/Layer"
import { makeSegmentStore } from "./raw-store.js"
import { type SegmentLimits, SegmentStore, type SegmentStoreShape } from "./segment.js"

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

export const makeMemorySegmentStore = (
  contents: MemorySegments = new MemorySegments(),
  options: { readonly timeoutMs?: number } = {}
): SegmentStoreShape =>
  makeSegmentStore({
    backend: "memory",
    limits: contents.limits,
    timeoutMs: options.timeoutMs ?? 5_000,
    raw: {
      create: async (segment) => contents.create(segment),
      append: async (segment, expectedTail, bytes) => contents.append(segment, expectedTail, bytes),
      read: async (segment, from, maxRecords) => contents.read(segment, from, maxRecords),
      size: async (segment) => contents.size(segment),
      remove: async (segment) => contents.remove(segment)
    }
  })

export const memorySegmentLayer = (contents: MemorySegments = new MemorySegments()): Layer.Layer<SegmentStore> =>
  Layer.succeed(SegmentStore, makeMemorySegmentStore(contents))
