/**
 * `pnpm test:nemesis [--minutes N] [--seed S]`: the nemesis of popuc-nemesis.ts for N minutes (1 by
 * default), then its figures: operations, faults, unknown outcomes, rejoin times, and the checks' verdicts.
 * Exits non-zero when a check fails. The script builds first: replicas start from dist only when it is fresh
 * (from TypeScript they start several times slower, and restart times would measure that).
 */
import { parseArgs } from "node:util"
import { formatEntry, formatLostWrite } from "@reef/replica"
import { runNemesis, summarize } from "./popuc-nemesis.js"

const { values } = parseArgs({
  options: { minutes: { type: "string", default: "1" }, seed: { type: "string" } },
  strict: true
})
const minutes = Number(values.minutes)
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed)
if (!(minutes >= 0) || !Number.isInteger(seed)) {
  console.error("usage: pnpm test:nemesis [--minutes N] [--seed S]")
  process.exit(2)
}
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
