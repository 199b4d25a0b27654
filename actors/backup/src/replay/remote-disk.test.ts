import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chainSpec, genesisStorage, Source, StateReader, type StoreTables, testStore } from "@reef/chain"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { planBatch } from "../core/plan.js"
import { ReaderPool } from "./reader-pool.js"
import { stall, stateReader } from "./remote-disk.js"

const spec = chainSpec("test", 4)
const dir = mkdtempSync(join(tmpdir(), "reef-remote-disk-"))
let tables: StoreTables
const keys = [...genesisStorage(spec)].slice(0, 40).map(([address, slot]) => address + slot)

beforeAll(() => {
  tables = testStore(join(dir, "store"), spec)
}, 60_000)
afterAll(async () => {
  await tables.env.close()
  rmSync(dir, { recursive: true, force: true })
})

// Lower bounds only: a wait lasts at least what it was asked for, however loaded the machine.
describe("the emulated remote disk (--latency-us)", () => {
  it("stalls the thread at least the time asked", () => {
    const started = performance.now()
    stall(3000)
    expect(performance.now() - started).toBeGreaterThanOrEqual(2.9)
  })

  it("reads the same values as the real disk, each seek delayed", () => {
    const real = new StateReader(tables)
    const remote = stateReader(tables, 1000)
    expect(stateReader(tables, 0)).toBeInstanceOf(StateReader)
    const head = real.head()
    const started = performance.now()
    const values = keys.map((key) => remote.storage(key, head, head))
    expect(performance.now() - started).toBeGreaterThanOrEqual(keys.length * 0.95)
    expect(values).toEqual(keys.map((key) => real.storage(key, head, head)))
    expect(values.some((v) => v !== 0)).toBe(true)
  })

  it("delays the prefetch readers' seeks too, and they read the same values", async () => {
    const plan = planBatch(
      [
        {
          number: 1,
          hint: { block: 1, storage: keys, sources: new Uint8Array(keys.length).fill(Source.Plain), code: [] }
        }
      ],
      2
    )
    const read = async (latencyUs: number) => {
      const pool = await ReaderPool.start(tables.path, 2, latencyUs)
      try {
        return await pool.read(plan)
      } finally {
        await pool.close()
      }
    }
    const real = await read(0)
    const remote = await read(2000)
    expect([...remote.values]).toEqual([...real.values])
    // Two readers, each with half the keys: the slowest one waited at least its half.
    expect(remote.slowestReaderMs).toBeGreaterThanOrEqual((keys.length / 2) * 1.9)
  })
})
