/**
 * `pnpm test:nemesis remora [--minutes N] [--seed S]`: Remora's nemesis (remora-nemesis.ts) for N minutes of
 * faults (1 by default), then its figures: transactions, faults, recoveries, times to resume, and the checks'
 * verdict. Exits non-zero when a check fails.
 */
import { parseArgs } from "node:util"
import { runRemoraNemesis, summarizeRemora } from "./remora-nemesis.js"

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: { minutes: { type: "string", default: "1" }, seed: { type: "string" } },
  strict: true
})
const minutes = Number(values.minutes)
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed)
if (!(minutes >= 0) || !Number.isInteger(seed)) {
  console.error("usage: pnpm test:nemesis remora [--minutes N] [--seed S]")
  process.exit(2)
}
console.log(`remora nemesis: ${minutes} min of faults, seed ${seed} (replay with --seed ${seed})`)
const report = await runRemoraNemesis({ faultsMs: minutes * 60_000, seed, say: (line) => console.log(line) })
console.log(`\n${summarizeRemora(report)}`)
process.exit(report.problems.length === 0 ? 0 : 1)
