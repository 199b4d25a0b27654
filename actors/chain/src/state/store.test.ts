import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { decodeValue, encodeValue, KEY_BYTES, latin1Bytes, type StorageKey } from "./keys.js"
import { StateModel } from "./model.js"
import {
  appendGenesisSorted,
  commitBlock,
  commitBlockInTransaction,
  openTables,
  readHead,
  Source,
  StateReader,
  type StoreTables
} from "./store.js"

const dir = mkdtempSync(join(tmpdir(), "reef-chain-store-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let nextDb = 0
const freshTables = () => openTables({ path: join(dir, `db-${nextDb++}`), durable: false, mapSizeBytes: 2 ** 28 })

// A small key universe so that blocks collide on keys; the bytes 0x00 and 0xff sit at the edges of the
// history seek's range (key ‖ block .. key ‖ ff..ff).
const byteVariants = [0x00, 0x01, 0x7f, 0xfe, 0xff]
const keyArb: fc.Arbitrary<StorageKey> = fc
  .tuple(fc.constantFrom(...byteVariants), fc.constantFrom(...byteVariants), fc.constantFrom(...byteVariants))
  .map(([a, s, t]) => {
    const bytes = Buffer.alloc(KEY_BYTES, a)
    bytes.fill(s, 20, 51)
    bytes[51] = t
    return bytes.toString("latin1")
  })
const valueArb = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 300 }),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })
)
const writesArb = fc.array(fc.tuple(keyArb, valueArb), { maxLength: 12 }).map((w) => new Map(w))
const historyArb = fc.record({
  genesis: fc.array(fc.tuple(keyArb, valueArb), { maxLength: 30 }).map((g) => new Map(g)),
  blocks: fc.array(writesArb, { minLength: 0, maxLength: 12 })
})

// Every other key gets pre-history (a change in block 0): reads as of block 0 and later must not see it.
const loadGenesis = (tables: StoreTables, genesis: ReadonlyMap<StorageKey, number>) =>
  appendGenesisSorted(
    tables,
    [...genesis.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v], i) => [latin1Bytes(k), v, i % 2 === 0 ? 12345 : undefined] as const),
    7
  )

describe("compact values", () => {
  it("round-trip every value below 2^53 and encode without leading zeros", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (v) => {
        const bytes = encodeValue(v)
        expect(decodeValue(bytes)).toBe(v)
        expect(bytes.length === 0 || bytes[0] !== 0).toBe(true)
      })
    )
  })

  it("reject values above 2^53 - 1 and over 32 bytes", () => {
    expect(() => decodeValue(Buffer.from("20000000000000", "hex"))).toThrow(/above 2\^53/)
    expect(() => decodeValue(Buffer.alloc(33))).toThrow(/33 bytes/)
  })
})

describe("the two-step lookup (reth's history index + change sets)", () => {
  it("reads every key as of every block exactly as a brute-force replay, with the cheapest source", async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, async ({ genesis, blocks }) => {
        const tables = freshTables()
        try {
          const model = new StateModel(genesis)
          loadGenesis(tables, genesis)
          for (const [i, writes] of blocks.entries()) {
            const changes = model.apply(writes)
            // Both commit paths: asynchronous (actors) and inside a bulk transaction (builds).
            if (i % 2 === 0) await commitBlock(tables, i + 1, changes)
            else tables.env.transactionSync(() => commitBlockInTransaction(tables, i + 1, changes))
          }
          expect(readHead(tables)).toBe(blocks.length)
          const reader = new StateReader(tables)
          const keys = new Set([...genesis.keys(), ...blocks.flatMap((b) => [...b.keys()])])
          for (const key of keys) {
            for (let asOf = 0; asOf <= model.head; asOf++) {
              expect(reader.storage(key, asOf, model.head)).toBe(model.read(key, asOf))
              expect(reader.lastSource).toBe(model.sourceOf(key, asOf))
            }
          }
        } finally {
          await tables.env.close()
        }
      }),
      { numRuns: 40 }
    )
  })

  it("reads a key that was never written as zero, with no I/O beyond the two seeks", async () => {
    const tables = freshTables()
    try {
      const reader = new StateReader(tables)
      const never = Buffer.alloc(KEY_BYTES, 0x42).toString("latin1")
      expect(reader.storage(never, 0, 0)).toBe(0)
      expect(reader.lastSource).toBe(Source.Zero)
    } finally {
      await tables.env.close()
    }
  })

  it("refuses a block committed out of order", async () => {
    const tables = freshTables()
    try {
      await expect(commitBlock(tables, 2, [])).rejects.toThrow(/head is 0/)
      await commitBlock(tables, 1, [])
      await expect(commitBlock(tables, 1, [])).rejects.toThrow(/head is 1/)
    } finally {
      await tables.env.close()
    }
  })

  it("serves a consistent snapshot to a reader holding a read transaction while blocks commit", async () => {
    const tables = freshTables()
    try {
      const key = Buffer.alloc(KEY_BYTES, 7).toString("latin1")
      const model = new StateModel(new Map([[key, 5]]))
      loadGenesis(tables, new Map([[key, 5]]))
      const txn = tables.env.useReadTransaction()
      const pinned = new StateReader(tables, txn)
      await commitBlock(tables, 1, model.apply(new Map([[key, 9]])))
      expect(pinned.head()).toBe(0)
      expect(pinned.storage(key, 0, 0)).toBe(5)
      txn.done()
      const fresh = new StateReader(tables)
      expect(fresh.head()).toBe(1)
      expect(fresh.storage(key, 0, 1)).toBe(5)
      expect(fresh.lastSource).toBe(Source.Changeset)
      expect(fresh.storage(key, 1, 1)).toBe(9)
      expect(fresh.lastSource).toBe(Source.Plain)
    } finally {
      await tables.env.close()
    }
  })
})
