/**
 * `pnpm sim airdb [--seeds N] [--seed S] [--scenario a,b] [--mutant name]`: runs the AirDB simulator over
 * consecutive seeds and prints a table; every violation comes with the command that replays it.
 */
import { formatTable, parseSimArgs } from "./cli-args.js"
import { MUTANTS, replayCommand, runScenario, SCENARIOS } from "./scenarios.js"

const usage = `usage: pnpm sim airdb [--seeds N] [--seed S] [--scenario a,b] [--mutant name]
  --seeds N     consecutive seeds per scenario (default 50, or 1 with --seed)
  --seed S      first seed (default 1)
  --scenario    comma-separated subset of: ${[...SCENARIOS.keys()].join(", ")}
  --mutant      run a deliberately broken client to see a violation: ${[...MUTANTS.keys()].join(", ")}`

export const runAirDbSimCli = (args: ReadonlyArray<string>): number => {
  if (args.includes("--help")) {
    console.log(usage)
    return 0
  }
  const parsed = parseSimArgs(args, usage, 50)
  const mutant = parsed.mutant
  const scenarios =
    parsed.scenarios ?? (mutant === undefined ? [...SCENARIOS.keys()] : [MUTANTS.get(mutant)?.scenario ?? ""])
  for (const s of scenarios) if (!SCENARIOS.has(s)) throw new Error(`unknown scenario ${s}\n${usage}`)
  const { seeds, first } = parsed
  const rows: Array<Array<string>> = []
  let violations = 0
  for (const scenario of scenarios) {
    const started = performance.now()
    const sum = {
      committed: 0,
      aborted: 0,
      unknown: 0,
      entries: 0,
      crashes: 0,
      pauses: 0,
      stalls: 0,
      outages: 0,
      ambiguous: 0,
      snapshots: 0,
      maxPending: 0,
      bad: 0
    }
    for (let seed = first; seed < first + seeds; seed++) {
      const r = runScenario(scenario, seed, mutant)
      sum.committed += r.stats.committed
      sum.aborted += r.stats.aborted
      sum.unknown += r.stats.unknown
      sum.entries += r.stats.entries
      sum.crashes += r.stats.crashes
      sum.pauses += r.stats.pauses
      sum.stalls += r.stats.stalls
      sum.outages += r.stats.outages
      sum.ambiguous += r.stats.ambiguousCalls
      sum.snapshots += r.stats.snapshots
      sum.maxPending = Math.max(sum.maxPending, r.stats.maxPending)
      if (r.violation !== undefined) {
        sum.bad++
        violations++
        if (sum.bad <= 3) {
          console.log(
            `VIOLATION of ${r.violation.property} in scenario=${scenario} seed=${seed}${mutant === undefined ? "" : ` mutant=${mutant}`}\n  ${r.violation.detail}\n  reproduce with: ${replayCommand(r)}\n`
          )
        }
      }
    }
    const ms = (performance.now() - started) / seeds
    rows.push([
      scenario,
      String(seeds),
      String(sum.bad),
      String(sum.committed),
      String(sum.aborted),
      String(sum.unknown),
      String(sum.entries),
      String(sum.snapshots),
      String(sum.crashes),
      `${sum.pauses}/${sum.stalls}/${sum.outages}`,
      String(sum.ambiguous),
      String(sum.maxPending),
      ms.toFixed(0)
    ])
  }
  const header = [
    "scenario",
    "runs",
    "violations",
    "committed",
    "aborted",
    "unknown",
    "entries",
    "snapshot segs",
    "crashes",
    "pauses/stalls/outages",
    "ambiguous calls",
    "max n-i_k",
    "ms/run"
  ]
  console.log(formatTable(header, rows))
  console.log(violations === 0 ? "\nno violations" : `\n${violations} violations`)
  return violations === 0 ? 0 : 1
}
