/**
 * `pnpm sim airdb-core [--seeds N] [--seed S] [--scenario a,b] [--mutant name]`: runs the client core's
 * simulator over consecutive seeds and prints a table; every violation comes with the command that replays it.
 */
import { formatTable, parseSimArgs } from "./cli-args.js"
import { CORE_MUTANTS, CORE_SCENARIOS, coreReplayCommand, runCoreScenario } from "./core-scenarios.js"

const usage = `usage: pnpm sim airdb-core [--seeds N] [--seed S] [--scenario a,b] [--mutant name]
  --seeds N     consecutive seeds per scenario (default 500, or 1 with --seed)
  --seed S      first seed (default 1)
  --scenario    comma-separated subset of: ${[...CORE_SCENARIOS.keys()].join(", ")}
  --mutant      run a deliberately broken core to see it caught: ${[...CORE_MUTANTS.keys()].join(", ")}`

const COLUMNS = [
  "scenario",
  "runs",
  "violations",
  "committed",
  "aborted",
  "unknown",
  "entries",
  "snapshots",
  "adoptions",
  "crashes",
  "pauses",
  "stalls",
  "ambiguous",
  "failed calls",
  "ms/run"
] as const

export const runAirDbCoreSimCli = (args: ReadonlyArray<string>): number => {
  if (args.includes("--help")) {
    console.log(usage)
    return 0
  }
  const { seeds, first, mutant, ...parsed } = parseSimArgs(args, usage, 500)
  if (mutant !== undefined && !CORE_MUTANTS.has(mutant)) throw new Error(`unknown mutant ${mutant}\n${usage}`)
  const scenarios =
    parsed.scenarios ?? (mutant === undefined ? [...CORE_SCENARIOS.keys()] : [CORE_MUTANTS.get(mutant)!.scenario])
  for (const s of scenarios) if (!CORE_SCENARIOS.has(s)) throw new Error(`unknown scenario ${s}\n${usage}`)
  const rows: Array<ReadonlyArray<string>> = []
  let violations = 0
  for (const scenario of scenarios) {
    const started = performance.now()
    const sum = {
      committed: 0,
      aborted: 0,
      unknown: 0,
      entries: 0,
      snapshots: 0,
      adoptions: 0,
      crashes: 0,
      pauses: 0,
      stalls: 0,
      ambiguous: 0,
      failed: 0,
      bad: 0
    }
    for (let seed = first; seed < first + seeds; seed++) {
      const r = runCoreScenario(scenario, seed, mutant)
      const s = r.stats
      sum.committed += s.committed
      sum.aborted += s.aborted
      sum.unknown += s.unknown
      sum.entries += s.entries
      sum.snapshots += s.snapshots
      sum.adoptions += s.adoptions
      sum.crashes += s.crashes
      sum.pauses += s.pauses
      sum.stalls += s.stalls
      sum.ambiguous += s.ambiguousCalls
      sum.failed += s.failedCalls
      if (r.violation !== undefined) {
        sum.bad++
        violations++
        if (sum.bad <= 3) {
          console.log(
            `VIOLATION of ${r.violation.property} in scenario=${scenario} seed=${seed}${mutant === undefined ? "" : ` mutant=${mutant}`}\n  ${r.violation.detail}\n  reproduce with: ${coreReplayCommand(r)}\n`
          )
        }
      }
    }
    const { bad, ...counts } = sum
    rows.push([
      scenario,
      String(seeds),
      String(bad),
      ...Object.values(counts).map(String),
      ((performance.now() - started) / seeds).toFixed(0)
    ])
  }
  console.log(formatTable(COLUMNS, rows))
  console.log(violations === 0 ? "\nno violations" : `\n${violations} violations`)
  return violations === 0 ? 0 : 1
}
