/**
 * Table printing and small helpers the suites share. Results are written through the harness
 * (harness/result.ts `writeResult`: ratios with median and spread from interleaved rounds); `writeLegacyResult`
 * is what suites not yet moved to the harness still call, and goes when the last one has moved.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { writeSummary } from "./harness/summary.js"

export const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "results")

export interface BenchResult {
  readonly suite: string
  readonly quick: boolean
  readonly machine: Record<string, unknown>
  readonly metrics: Record<string, number | string | Record<string, unknown>>
  readonly ratios: Record<string, number>
}

export const machine = (): Record<string, unknown> => ({
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  date: new Date().toISOString()
})

export const writeLegacyResult = (result: BenchResult): string => {
  mkdirSync(resultsDir, { recursive: true })
  const path = join(resultsDir, `${result.suite}.json`)
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`)
  writeSummary(resultsDir)
  return path
}

export const round = (x: number, digits = 2): number => Number(x.toFixed(digits))

/** Peak resident set size of this process so far, in MB. */
export const peakRssMb = (): number => round(process.resourceUsage().maxRSS / 1024, 1)

export const printTable = (
  title: string,
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>
) => {
  const cells = [
    header.map(String),
    ...rows.map((r) => r.map((c) => (typeof c === "number" ? String(round(c)) : String(c))))
  ]
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) => row.map((c, i) => c.padStart(widths[i]!)).join("  ")
  console.log(`\n${title}\n${line(cells[0]!)}\n${widths.map((w) => "-".repeat(w)).join("  ")}`)
  for (const row of cells.slice(1)) console.log(line(row))
}
