/**
 * The conformance suite every segment layer passes (memory, JetStream, Redis, Azure): what the log layer
 * relies on, checked against the real server. Each backend's test file starts its server once and calls
 * `segmentConformance`.
 */
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SegmentStoreShape } from "./segment.js"

export interface StoreOptions {
  /** A tiny segment: it is full after about three small records. */
  readonly tiny?: boolean
  readonly timeoutMs?: number
}

export interface ConformanceBackend {
  readonly store: (options?: StoreOptions) => Effect.Effect<SegmentStoreShape, unknown, Scope.Scope>
  /** Freezes the server (SIGSTOP) until `resume`: calls then time out. */
  readonly pause?: Effect.Effect<void>
  readonly resume?: Effect.Effect<void>
}

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (b: Uint8Array) => new TextDecoder().decode(b)

export const segmentConformance = (
  name: string,
  start: Effect.Effect<ConformanceBackend, unknown, Scope.Scope>
): void => {
  describe(`segment conformance: ${name}`, () => {
    const scope = Effect.runSync(Scope.make())
    const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.extend(effect, scope))
    let backend: ConformanceBackend
    let store: SegmentStoreShape
    const fresh = () => `t-${randomUUID().slice(0, 13)}`

    beforeAll(async () => {
      backend = await run(start)
      store = await run(backend.store())
    }, 60_000)
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

    it("creates a segment once: a second create finds it", async () => {
      const seg = fresh()
      expect(await Effect.runPromise(store.create(seg))).toBe(true)
      expect(await Effect.runPromise(store.create(seg))).toBe(false)
      expect(await Effect.runPromise(store.size(seg))).toBe(0)
      expect(await Effect.runPromise(store.read(seg, 0))).toEqual([])
    })

    it("appends at the tail and reads records back with their positions", async () => {
      const seg = fresh()
      await Effect.runPromise(store.create(seg))
      let tail = 0
      const positions: Array<number> = []
      for (const word of ["alpha", "beta", "", "delta"]) {
        const r = await Effect.runPromise(store.append(seg, tail, bytes(word)))
        expect(r.position).toBe(tail)
        expect(r.tail).toBeGreaterThan(tail)
        positions.push(r.position)
        tail = r.tail
      }
      expect(await Effect.runPromise(store.size(seg))).toBe(tail)
      const all = await Effect.runPromise(store.read(seg, 0))
      expect(all.map((r) => text(r.bytes))).toEqual(["alpha", "beta", "", "delta"])
      expect(all.map((r) => r.position)).toEqual(positions)
      for (let i = 0; i + 1 < all.length; i++) expect(all[i]!.next).toBe(all[i + 1]!.position)
      expect(all.at(-1)!.next).toBe(tail)
      const fromSecond = await Effect.runPromise(store.read(seg, positions[1]!, { maxRecords: 2 }))
      expect(fromSecond.map((r) => text(r.bytes))).toEqual(["beta", ""])
      expect(await Effect.runPromise(store.read(seg, tail))).toEqual([])
    })

    it("refuses an append that is not at the tail, and stores nothing for it", async () => {
      const seg = fresh()
      await Effect.runPromise(store.create(seg))
      const first = await Effect.runPromise(store.append(seg, 0, bytes("first")))
      const stale = await Effect.runPromise(Effect.either(store.append(seg, 0, bytes("second"))))
      expect(Either.isLeft(stale) && stale.left._tag).toBe("SegmentConflict")
      const ahead = await Effect.runPromise(Effect.either(store.append(seg, first.tail + 1, bytes("third"))))
      expect(Either.isLeft(ahead) && ahead.left._tag).toBe("SegmentConflict")
      const all = await Effect.runPromise(store.read(seg, 0))
      expect(all.map((r) => text(r.bytes))).toEqual(["first"])
    })

    it("answers SegmentNotFound for a missing segment", async () => {
      const seg = fresh()
      for (const call of [store.append(seg, 0, bytes("x")), store.read(seg, 0), store.size(seg)] as const) {
        const r = await Effect.runPromise(Effect.either(call as Effect.Effect<unknown, { _tag: string }>))
        expect(Either.isLeft(r) && r.left._tag).toBe("SegmentNotFound")
      }
    })

    it("refuses oversized records and invalid names before any call", async () => {
      const seg = fresh()
      await Effect.runPromise(store.create(seg))
      const big = new Uint8Array(store.limits.maxAppendBytes + 1)
      const r = await Effect.runPromise(Effect.either(store.append(seg, 0, big)))
      expect(Either.isLeft(r) && r.left._tag).toBe("SegmentRecordTooLarge")
      const bad = await Effect.runPromise(Effect.either(store.create("no/such name")))
      expect(Either.isLeft(bad) && bad.left._tag).toBe("InvalidSegmentName")
    })

    it("stores a record of the maximum append size intact", async () => {
      const seg = fresh()
      await Effect.runPromise(store.create(seg))
      const big = new Uint8Array(store.limits.maxAppendBytes).map((_, i) => (i * 31) & 0xff)
      const r = await Effect.runPromise(store.append(seg, 0, big))
      const [back] = await Effect.runPromise(store.read(seg, 0, { maxRecords: 1, bytesHint: r.tail - r.position }))
      expect(back!.bytes.byteLength).toBe(big.byteLength)
      expect(Buffer.compare(Buffer.from(back!.bytes), Buffer.from(big))).toBe(0)
      // A hint that is too short still finds the whole record.
      const [again] = await Effect.runPromise(store.read(seg, 0, { maxRecords: 1, bytesHint: 16 }))
      expect(again!.bytes.byteLength).toBe(big.byteLength)
    })

    it("keeps every record of concurrent conditional appends from several clients exactly once", async () => {
      const seg = fresh()
      await Effect.runPromise(store.create(seg))
      const clients = 4
      const perClient = 12
      const stores = await run(Effect.forEach(Array.from({ length: clients }), () => backend.store()))
      const appendAll = (client: number) =>
        Effect.gen(function* () {
          const s = stores[client]!
          let tail = yield* s.size(seg)
          for (let i = 0; i < perClient; i++) {
            for (;;) {
              const r = yield* Effect.either(s.append(seg, tail, bytes(`c${client}-${i}`)))
              if (Either.isRight(r)) {
                tail = r.right.tail
                break
              }
              if (r.left._tag !== "SegmentConflict") return yield* Effect.fail(r.left)
              tail = r.left.actual ?? (yield* s.size(seg))
            }
          }
        })
      await Effect.runPromise(
        Effect.forEach(
          Array.from({ length: clients }, (_, c) => c),
          appendAll,
          { concurrency: "unbounded" }
        )
      )
      const all: Array<string> = []
      let from = 0
      for (;;) {
        const got = await Effect.runPromise(store.read(seg, from, { maxRecords: 16 }))
        if (got.length === 0) break
        all.push(...got.map((r) => text(r.bytes)))
        from = got.at(-1)!.next
      }
      expect(all.length).toBe(clients * perClient)
      expect(new Set(all).size).toBe(all.length)
      for (let c = 0; c < clients; c++) {
        const mine = all.filter((w) => w.startsWith(`c${c}-`))
        expect(mine).toEqual(Array.from({ length: perClient }, (_, i) => `c${c}-${i}`))
      }
    })

    it("answers SegmentFull at the backend's limit", async () => {
      const tiny = await run(backend.store({ tiny: true }))
      const seg = fresh()
      await Effect.runPromise(tiny.create(seg))
      let tail = 0
      let full: string | undefined
      for (let i = 0; i < 64 && full === undefined; i++) {
        const r = await Effect.runPromise(Effect.either(tiny.append(seg, tail, bytes(`record-${i}`))))
        if (Either.isRight(r)) tail = r.right.tail
        else full = r.left._tag
      }
      expect(full).toBe("SegmentFull")
      expect((await Effect.runPromise(tiny.read(seg, 0))).length).toBeGreaterThan(0)
    })

    it("removes a segment", async () => {
      const seg = fresh()
      await Effect.runPromise(store.create(seg))
      await Effect.runPromise(store.append(seg, 0, bytes("x")))
      await Effect.runPromise(store.remove(seg))
      await Effect.runPromise(store.remove(seg))
      const r = await Effect.runPromise(Effect.either(store.size(seg)))
      expect(Either.isLeft(r) && r.left._tag).toBe("SegmentNotFound")
    })

    it("answers a typed timeout when the server does not answer, and works again after", async () => {
      if (backend.pause === undefined || backend.resume === undefined) return
      const quick = await run(backend.store({ timeoutMs: 300 }))
      const seg = fresh()
      await Effect.runPromise(quick.create(seg))
      await Effect.runPromise(backend.pause)
      try {
        const r = await Effect.runPromise(Effect.either(quick.append(seg, 0, bytes("x"))))
        expect(Either.isLeft(r) && r.left._tag).toMatch(/SegmentTimeout|SegmentUnavailable/)
        const s = await Effect.runPromise(Effect.either(quick.size(seg)))
        expect(Either.isLeft(s) && s.left._tag).toMatch(/SegmentTimeout|SegmentUnavailable/)
      } finally {
        await Effect.runPromise(backend.resume)
      }
      // The append that timed out may have happened once the server woke up: a conditional retry tells.
      const retried = await Effect.runPromise(
        quick.append(seg, 0, bytes("x")).pipe(
          Effect.retry({
            schedule: Schedule.spaced("100 millis").pipe(Schedule.upTo("10 seconds")),
            while: (e) => e._tag === "SegmentTimeout" || e._tag === "SegmentUnavailable"
          }),
          Effect.either
        )
      )
      expect(Either.isRight(retried) || retried.left._tag === "SegmentConflict").toBe(true)
      expect((await Effect.runPromise(quick.read(seg, 0))).map((r) => text(r.bytes))).toEqual(["x"])
    })
  })
}
