import { type Hint, KEY_BYTES, Source } from "@reef/chain/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type BatchBlock, planBatch, sliceBySeeks } from "./plan.js"

// A small key universe so blocks of a batch share keys, with any source each time.
const keyArb = fc.integer({ min: 0, max: 40 }).map((i) => Buffer.alloc(KEY_BYTES, i).toString("latin1"))
const hintArb = (block: number): fc.Arbitrary<BatchBlock["hint"]> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .uniqueArray(fc.tuple(keyArb, fc.constantFrom(Source.Plain, Source.Zero, Source.Changeset)), {
          selector: ([k]) => k,
          maxLength: 25
        })
        .map(
          (entries): Hint => ({
            block,
            storage: entries.map(([k]) => k),
            sources: Uint8Array.from(entries.map(([, s]) => s)),
            code: []
          })
        )
    },
    { weight: 1, arbitrary: fc.constant({ error: "missing" as const }) }
  )
const batchArb = fc
  .integer({ min: 1, max: 8 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => hintArb(100 + i))))
  .map((hints) => hints.map((hint, i): BatchBlock => ({ number: 100 + i, hint })))

describe("planning a batch's prefetch (§4.2)", () => {
  it("gives every hinted key of every block an entry with that key, source and parent block", () => {
    fc.assert(
      fc.property(batchArb, fc.integer({ min: 1, max: 16 }), (batch, readers) => {
        const plan = planBatch(batch, readers)
        batch.forEach((block, b) => {
          const planned = plan.blocks[b]!
          if ("error" in block.hint) {
            expect(planned.entries.length).toBe(0)
            expect(planned.hintError).toBe(block.hint.error)
            return
          }
          const hint = block.hint
          hint.storage.forEach((key, i) => {
            const entry = planned.entries[i]!
            expect(plan.keys[entry]).toBe(key)
            expect(plan.sources[entry]).toBe(hint.sources[i])
            const expectedAsOf = hint.sources[i] === Source.Changeset ? block.number - 1 : -1
            expect(plan.asOf[entry]).toBe(expectedAsOf)
          })
        })
      })
    )
  })

  it("merges the batch into one set in key order: one entry per key and source, per block for change sets", () => {
    fc.assert(
      fc.property(batchArb, (batch) => {
        const plan = planBatch(batch, 4)
        const ids = plan.keys.map((key, i) => `${key}|${plan.sources[i]}|${plan.asOf[i]}`)
        expect(new Set(ids).size).toBe(ids.length)
        for (let i = 1; i < plan.keys.length; i++) expect(plan.keys[i - 1]! <= plan.keys[i]!).toBe(true)
        expect(plan.counts.plain + plan.counts.zero + plan.counts.changeset).toBe(plan.keys.length)
      })
    )
  })

  it("cuts the entries into contiguous slices that cover every read, at most one per reader", () => {
    fc.assert(
      fc.property(fc.uint8Array({ max: 2, maxLength: 300 }), fc.integer({ min: 1, max: 32 }), (sources, readers) => {
        const slices = sliceBySeeks(sources, readers)
        expect(slices.length).toBeLessThanOrEqual(readers)
        let at = 0
        for (const slice of slices) {
          expect(slice.start).toBe(at)
          expect(slice.end).toBeGreaterThan(slice.start)
          at = slice.end
        }
        if (sources.some((s) => s !== Source.Zero)) expect(at).toBe(sources.length)
      })
    )
  })
})
