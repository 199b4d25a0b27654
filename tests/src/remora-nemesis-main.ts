/**
 * `pnpm test:nemesis remora [--minutes N] [--seed S] [--elastic]`: Remora's nemesis (remora-nemesis.ts) for N
 * minutes of faults (1 by default), then its figures: transactions, faults, recoveries, scale-outs and -ins,
 * times to resume, and the checks' verdict. `--elastic`: the coordinator autoscales 1..3 workers under a load
 * that rises and falls. Exits non-zero when a check fails.
 */
import { nemesisArgs } from "./nemesis-args.js"
import { runRemoraNemesis, summarizeRemora } from "./remora-nemesis.js"

const { minutes, seed, flags } = nemesisArgs("pnpm test:nemesis remora [--minutes N] [--seed S] [--elastic]", {
  args: process.argv.slice(3),
  flags: ["elastic"]
})
const elastic = flags.has("elastic")
console.log(
  `remora nemesis${elastic ? " (elastic)" : ""}: ${minutes} min of faults, seed ${seed} (replay with --seed ${seed}${elastic ? " --elastic" : ""})`
)
const report = await runRemoraNemesis({ faultsMs: minutes * 60_000, seed, elastic, say: (line) => console.log(line) })
console.log(`\n${summarizeRemora(report)}`)
process.exit(report.problems.length === 0 ? 0 : 1)
