/**
 * Table printing and small helpers the suites share. Results are written through the harness
 * (harness/result.ts `writeResult`: ratios with median and spread from interleaved rounds, plots, SUMMARY.md).
 */
export { resultsDir } from "./harness/result.js"

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
