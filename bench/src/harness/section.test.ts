import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { interleave } from "./interleave.js"
import { ratioOf } from "./ratio.js"
import { BenchContractError, type BenchResult, writeResult, writeSection } from "./result.js"

const tmp = mkdtempSync(join(tmpdir(), "reef-section-"))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const spec = { numerator: "a (/s)", denominator: "b (/s)", conditions: { inFlight: 1 } }
const ratio = async (rounds: number, a: number) => {
  const measured = await interleave(
    { quick: true, rounds, policy: { busyLoadavg: Number.POSITIVE_INFINITY, busyStealPct: 100 }, log: () => {} },
    { a: async () => a, b: async () => 2 }
  )
  return ratioOf(
    spec,
    measured,
    (v) => v.a,
    (v) => v.b
  )
}
const suite = async (quick: boolean, a: number): Promise<BenchResult> => ({
  suite: "s",
  quick,
  command: "pnpm bench s",
  machine: {},
  ratios: { aOverB: await ratio(quick ? 2 : 3, a) },
  metrics: { main: a }
})
const read = (dir: string) => JSON.parse(readFileSync(join(dir, "s.json"), "utf8")) as BenchResult
const info = (quick: boolean) => ({ command: "pnpm bench s --part", quick, machine: {} })

describe("result sections", () => {
  it("a section's run adds to the suite's file; the suite's next run keeps it; the section's next run replaces it", async () => {
    const dir = join(tmp, "keep")
    await writeResult(await suite(false, 4), dir)
    await writeSection("s", "part", { info: info(true), ratios: { partAOverB: await ratio(2, 6) }, metrics: 1 }, dir)
    expect(Object.keys(read(dir).ratios)).toEqual(["aOverB", "partAOverB"])
    expect(read(dir).metrics).toEqual({ main: 4, part: 1 })
    // A full run of the suite keeps the quick section (checked with the section's own repeats).
    await writeResult(await suite(false, 8), dir)
    expect(read(dir).ratios.aOverB!.median).toBe(4)
    expect(read(dir).ratios.partAOverB!.median).toBe(3)
    expect(read(dir).sections).toEqual({ part: info(true) })
    await writeSection("s", "part", { info: info(true), ratios: { partAOverB: await ratio(2, 10) }, metrics: 2 }, dir)
    expect(read(dir).ratios.partAOverB!.median).toBe(5)
    expect(read(dir).ratios.aOverB!.median).toBe(4)
    expect(read(dir).metrics).toEqual({ main: 8, part: 2 })
  })

  it("a section written first makes the file; a section's ratios still keep the contract", async () => {
    const dir = join(tmp, "first")
    await writeSection("s", "part", { info: info(true), ratios: { partAOverB: await ratio(2, 6) }, metrics: 1 }, dir)
    expect(read(dir).sections).toEqual({ part: info(true) })
    const one = await ratio(2, 6)
    const broken = { ...one, values: [3] }
    await expect(
      writeSection("s", "part", { info: info(false), ratios: { partAOverB: broken }, metrics: 1 }, dir)
    ).rejects.toBeInstanceOf(BenchContractError)
  })
})
