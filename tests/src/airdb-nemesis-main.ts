/**
 * `pnpm test:airdb-nemesis [--minutes N] [--seed S] [--long-pauses]`: airdb-nemesis.ts for N minutes of random
 * faults after the first four, then its figures and the checks' verdicts. `--long-pauses`: client SIGSTOPs of
 * up to 15 s and storage SIGSTOPs of up to 20 s (the issue's). Exits non-zero when a check fails.
 */
import { runAirDbNemesis, summarizeAirDb } from "./airdb-nemesis.js"
import { nemesisArgs } from "./nemesis-args.js"

const { minutes, seed, flags } = nemesisArgs("pnpm test:airdb-nemesis [--minutes N] [--seed S] [--long-pauses]", {
  flags: ["long-pauses"]
})
console.log(`airdb nemesis: ${minutes} min of faults, seed ${seed} (replay with --seed ${seed})`)
const report = await runAirDbNemesis({
  seed,
  faultsMs: minutes * 60_000,
  ...(flags.has("long-pauses") ? { maxClientPauseMs: 15_000, maxStoragePauseMs: 20_000 } : {}),
  say: (line) => console.log(line)
})
console.log(`\n${summarizeAirDb(report)}`)
const failures = [
  ...report.elle.anomalies.slice(0, 5).map((a) => `${a.type}: ${a.explanation}`),
  ...report.appends.lost,
  ...report.disagreements
]
if (failures.length > 0) {
  console.error(`\nFAILED:\n${failures.join("\n")}`)
  process.exit(1)
}
process.exit(0)
