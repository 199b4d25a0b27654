/**
 * `pnpm test:nemesis remora [--minutes N] [--seed S]`: Remora's nemesis (remora-nemesis.ts) for N minutes of
 * faults (1 by default), then its figures: transactions, faults, recoveries, times to resume, and the checks'
 * verdict. Exits non-zero when a check fails.
 */
import { nemesisArgs } from "./nemesis-args.js"
import { runRemoraNemesis, summarizeRemora } from "./remora-nemesis.js"

const { minutes, seed } = nemesisArgs("pnpm test:nemesis remora [--minutes N] [--seed S]", {
  args: process.argv.slice(3)
})
console.log(`remora nemesis: ${minutes} min of faults, seed ${seed} (replay with --seed ${seed})`)
const report = await runRemoraNemesis({ faultsMs: minutes * 60_000, seed, say: (line) => console.log(line) })
console.log(`\n${summarizeRemora(report)}`)
process.exit(report.problems.length === 0 ? 0 : 1)
