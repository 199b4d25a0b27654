/**
 * `pnpm sim ira [--seeds N] [--seed S] [--scenario a,b] [--mutant name]`: runs the backup follower's
 * simulator over a seed range per scenario, prints a table and every violation with the command that
 * replays it. Returns the exit code (1 on any violation, 2 on bad arguments).
 */
import { parseArgs } from "node:util"
import { MUTANTS } from "./mutants.js"
import { describeFailure, runSeeds, SCENARIOS, type ScenarioSummary } from "./scenarios.js"

const MAX_FAILURES_SHOWN = 3

export const IRA_SIM_USAGE = `usage: pnpm sim ira [--seeds N] [--seed S] [--scenario a,b] [--mutant name]
  --seeds N     consecutive seeds per scenario (default 500, or 1 with --seed)
  --seed S      first seed (default 1); with --seeds 1 this replays one run
  --scenario    comma-separated subset of: ${[...SCENARIOS.keys()].join(", ")}
  --mutant      run a deliberately broken follower to see a violation: ${[...MUTANTS.keys()].join(", ")}`

type Row = ScenarioSummary & { readonly ms: number }

/** The table's columns: header and cell. */
const COLUMNS: ReadonlyArray<readonly [string, (r: Row) => string | number]> = [
  ["scenario", (r) => r.scenario],
  ["runs", (r) => r.runs],
  ["violations", (r) => r.failures.length],
  ["blocks", (r) => r.blocks],
  ["executions", (r) => r.executions],
  ["hints rejected", (r) => r.hintsRejected],
  ["no hint", (r) => r.hintFailures],
  ["refetches", (r) => r.refetches],
  ["duplicates", (r) => r.duplicates],
  ["crashes", (r) => r.crashes],
  ["ms/run", (r) => (r.ms / r.runs).toFixed(1)]
]

const render = (rows: ReadonlyArray<Row>): string => {
  const cells = [COLUMNS.map(([h]) => h), ...rows.map((r) => COLUMNS.map(([, cell]) => String(cell(r))))]
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)))
  const line = (cs: ReadonlyArray<string>) =>
    cs.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  return [line(cells[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n")
}

const count = (raw: string | undefined, name: string, fallback: number): number => {
  const v = raw === undefined ? fallback : Number(raw)
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer`)
  return v
}

export const runIraSim = (argv: ReadonlyArray<string>): number => {
  let seeds: number
  let firstSeed: number
  let scenarios: ReadonlyArray<string>
  let mutant: string | undefined
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        seeds: { type: "string" },
        seed: { type: "string" },
        scenario: { type: "string" },
        mutant: { type: "string" },
        help: { type: "boolean" }
      }
    })
    if (values.help) {
      console.log(IRA_SIM_USAGE)
      return 0
    }
    seeds = count(values.seeds, "seeds", values.seed === undefined ? 500 : 1)
    firstSeed = count(values.seed, "seed", 1)
    scenarios = values.scenario?.split(",") ?? [...SCENARIOS.keys()]
    for (const s of scenarios) if (!SCENARIOS.has(s)) throw new Error(`unknown scenario ${s}`)
    mutant = values.mutant
    if (mutant !== undefined && !MUTANTS.has(mutant)) throw new Error(`unknown mutant ${mutant}`)
  } catch (e) {
    console.error(`${(e as Error).message}\n${IRA_SIM_USAGE}`)
    return 2
  }
  const rows: Array<Row> = []
  for (const scenario of scenarios) {
    const started = performance.now()
    const summary = runSeeds(scenario, firstSeed, seeds, mutant === undefined ? {} : { mutant })
    rows.push({ ...summary, ms: performance.now() - started })
    for (const f of summary.failures.slice(0, MAX_FAILURES_SHOWN)) console.log(`${describeFailure(f, mutant)}\n`)
    const more = summary.failures.length - MAX_FAILURES_SHOWN
    if (more > 0) console.log(`... and ${more} more violations in ${scenario}\n`)
  }
  console.log(render(rows))
  const violations = rows.reduce((n, r) => n + r.failures.length, 0)
  console.log(violations === 0 ? "\nno violations" : `\n${violations} violations`)
  return violations === 0 ? 0 : 1
}
