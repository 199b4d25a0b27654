/**
 * `pnpm test:nemesis [--minutes N] [--seed S]`: the nemesis of popuc-nemesis.ts for N minutes (1 by
 * default), then its figures: operations, faults, unknown outcomes, rejoin times, and the checks' verdicts.
 * Exits non-zero when a check fails. The script builds first: replicas start from dist only when it is fresh
 * (from TypeScript they start several times slower, and restart times would measure that).
 */
import { formatEntry, formatLostWrite } from "@reef/replica"
import { nemesisArgs } from "./nemesis-args.js"
import { runNemesis, summarize } from "./popuc-nemesis.js"

const { minutes, seed } = nemesisArgs("pnpm test:nemesis [--minutes N] [--seed S]")
console.log(`nemesis: ${minutes} min of faults, seed ${seed} (replay with --seed ${seed})`)
const report = await runNemesis({ faultsMs: minutes * 60_000, seed, say: (line) => console.log(line) })
console.log(`\n${summarize(report)}`)
const failures = [
  ...(report.linearizability.ok
    ? []
    : [report.linearizability.reason, ...report.linearizability.minimalWindow.map(formatEntry)]),
  ...report.lostWrites.map(formatLostWrite),
  ...(new Set(report.states.map((s) => s.stateHash)).size === 1 ? [] : ["state hashes diverged"])
]
if (failures.length > 0) {
  console.error(`\nFAILED:\n${failures.join("\n")}`)
  process.exit(1)
}
process.exit(0)
