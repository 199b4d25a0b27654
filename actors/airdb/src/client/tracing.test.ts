import { ObservabilityTest, TestSpans } from "@reef/observability"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { MemorySegments, makeMemorySegmentStore } from "../segment/memory.js"
import { openClient } from "./client.js"

const small = {
  conflictWindow: 64,
  timely: { snapshotEvery: 4, epsilon: 0.5 },
  layout: { commandSegmentRecords: 64, stateSegmentRecords: 64, metaSegmentRecords: 16 }
}

describe("AirDB's spans", () => {
  it("traces transactions, tail syncs, appends, snapshot creation and the cold start with their attributes", async () => {
    const contents = new MemorySegments()
    const names = await Effect.runPromise(
      Effect.gen(function* () {
        yield* Effect.scoped(
          Effect.gen(function* () {
            const a = yield* openClient(makeMemorySegmentStore(contents), {
              store: "t",
              create: small,
              minSyncGapMs: 1
            })
            for (let i = 0; i < 12; i++) yield* a.put(`k${i}`, new TextEncoder().encode(`v${i}`))
            yield* a.transact((tx) => Effect.flatMap(tx.get("k1"), () => tx.put("k1", new Uint8Array([1]))))
            // Let the snapshotter finish what the last puts started.
            for (let i = 0; i < 50 && a.stats().snapshotsCreated === 0; i++) yield* Effect.sleep(10)
          })
        )
        // A second client starts cold and reads a key that only a snapshot holds: a speculative read.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const b = yield* openClient(makeMemorySegmentStore(contents), { store: "t", minSyncGapMs: 1 })
            yield* b.get("k0")
          })
        )
        const spans = yield* Effect.flatMap(TestSpans, (t) => t.spans)
        const create = spans.find((s) => s.name === "airdb.snapshot.create")
        expect(create?.attributes).toMatchObject({
          from: expect.any(Number),
          to: expect.any(Number),
          keys: expect.any(Number)
        })
        expect(create?.attributes.bytes).toBeGreaterThan(0)
        const tx = spans.find((s) => s.name === "airdb.transaction" && s.attributes["commit.ts"] !== undefined)
        expect(tx?.attributes.attempts).toBe(1)
        return new Set(spans.map((s) => s.name))
      }).pipe(Effect.provide(ObservabilityTest))
    )
    for (const name of [
      "airdb.transaction",
      "airdb.transaction.sync",
      "airdb.transaction.commit",
      "airdb.append",
      "airdb.tail-sync",
      "airdb.get",
      "airdb.read.speculative",
      "airdb.snapshot.create",
      "airdb.cold-start",
      "airdb.cold-start.index-load",
      "airdb.cold-start.tail-replay"
    ]) {
      expect(names.has(name), name).toBe(true)
    }
  })
})
