import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { MemorySegments, makeMemorySegmentStore } from "../segment/memory.js"
import { type LogCursor, SharedLog } from "./shared-log.js"

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)

const logOn = (contents: MemorySegments, segmentRecords = 3, metaRecords = 2) =>
  new SharedLog({ store: makeMemorySegmentStore(contents), prefix: "t-c", segmentRecords, metaRecords })

/** Appends `word` at the tail, reading on after each conflict (what a writer does). */
const appendAtTail = (log: SharedLog, cursor: LogCursor, word: string) =>
  Effect.gen(function* () {
    let c = cursor
    for (;;) {
      const r = yield* Effect.either(log.append(c, enc(word)))
      if (Either.isRight(r)) return r.right
      if (r.left._tag !== "SegmentConflict") return yield* Effect.fail(r.left)
      for (;;) {
        const got = yield* log.read(c, 100)
        c = got.cursor
        if (got.records.length === 0) break
      }
    }
  })

const readAll = (log: SharedLog) =>
  Effect.gen(function* () {
    let c = log.startCursor()
    const words: Array<string> = []
    for (;;) {
      const got = yield* log.read(c, 2)
      if (got.records.length === 0) return { words, cursor: c }
      words.push(...got.records.map((r) => dec(r.bytes)))
      for (const [i, r] of got.records.entries()) expect(r.index).toBe(words.length - got.records.length + i)
      c = got.cursor
    }
  })

describe("the shared log on bounded segments (§4.3)", () => {
  it("adds a tail segment when the last fills up, records it in meta segments, and reads across them", async () => {
    const contents = new MemorySegments()
    const log = logOn(contents)
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* log.ensureCreated()
        let c = log.startCursor()
        for (let i = 0; i < 11; i++) c = yield* appendAtTail(log, c, `w${i}`)
        expect(c.index).toBe(11)
      })
    )
    // 11 records in segments of 3: 4 segments, recorded in meta segments of 2 records each.
    expect(log.segments.map((s) => s.firstIndex)).toEqual([0, 3, 6, 9])
    expect(
      contents
        .names()
        .filter((n) => /-m\d$/.test(n))
        .sort()
    ).toEqual(["t-c-m0", "t-c-m1"])
    const reader = logOn(contents)
    const { words } = await Effect.runPromise(Effect.zipRight(reader.refreshMeta(), readAll(reader)))
    expect(words).toEqual(Array.from({ length: 11 }, (_, i) => `w${i}`))
  })

  it("keeps every record exactly once when several writers append and add segments concurrently", async () => {
    const contents = new MemorySegments()
    const writers = Array.from({ length: 4 }, () => logOn(contents))
    await Effect.runPromise(
      Effect.forEach(
        writers,
        (log, w) =>
          Effect.gen(function* () {
            yield* log.ensureCreated()
            let c = log.startCursor()
            for (let i = 0; i < 10; i++) {
              c = yield* appendAtTail(log, c, `${w}:${i}`)
              yield* Effect.yieldNow()
            }
          }),
        { concurrency: "unbounded" }
      )
    )
    const reader = logOn(contents)
    const { words } = await Effect.runPromise(Effect.zipRight(reader.refreshMeta(), readAll(reader)))
    expect(words).toHaveLength(40)
    expect(new Set(words).size).toBe(40)
    for (let w = 0; w < 4; w++) {
      expect(words.filter((x) => x.startsWith(`${w}:`))).toEqual(Array.from({ length: 10 }, (_, i) => `${w}:${i}`))
    }
    // Segments that lost a race to be published were removed: every data segment is in the meta.
    const published = new Set(reader.segments.map((s) => s.segment))
    expect(contents.names().filter((n) => !/-m\d+$/.test(n) && !published.has(n))).toEqual([])
  })

  it("starts a new segment with the records the log asks for (the state log's checkpoint)", async () => {
    const contents = new MemorySegments()
    const log = new SharedLog({
      store: makeMemorySegmentStore(contents),
      prefix: "t-s",
      segmentRecords: 2,
      metaRecords: 10,
      firstRecords: (first) => [enc(`checkpoint@${first}`)]
    })
    const words = await Effect.runPromise(
      Effect.gen(function* () {
        yield* log.ensureCreated()
        let c = log.startCursor()
        for (let i = 0; i < 4; i++) c = yield* appendAtTail(log, c, `w${i}`)
        return (yield* readAll(log)).words
      })
    )
    expect(words).toEqual(["checkpoint@0", "w0", "checkpoint@2", "w1", "checkpoint@4", "w2", "checkpoint@6", "w3"])
  })

  it("reports a meta segment that contradicts itself", async () => {
    const contents = new MemorySegments()
    const log = logOn(contents)
    await Effect.runPromise(log.ensureCreated())
    contents.overwrite("t-c-m0", 0, new Uint8Array([1, 0, 0, 0, 0, 9]))
    const r = await Effect.runPromise(Effect.either(logOn(contents).refreshMeta()))
    expect(Either.isLeft(r) && r.left._tag).toBe("CorruptRecord")
  })
})
