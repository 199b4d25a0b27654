/**
 * `pnpm sim remora [--seeds N] [--seed S] [--scenario a,b] [--mutant name]`: runs the Remora simulator over a
 * seed range per scenario, prints a table and every violation with the command that replays it. Returns the
 * exit code (1 on any violation, 2 on bad arguments).
 */
import { MUTANTS } from "./mutants.js"
import { describeFailure, runSeeds, SCENARIOS, type ScenarioSummary } from "./scenarios.js"

const MAX_FAILURES_SHOWN = 3

export const REMORA_SIM_USAGE = `usage: pnpm sim remora [--seeds N] [--seed S] [--scenario a,b] [--mutant name]
  --seeds N     consecutive seeds per scenario (default 1000, or 1 with --seed)
  --seed S      first seed (default 1); with --seeds 1 this replays one run
  --scenario    comma-separated subset of: ${[...SCENARIOS.keys()].join(", ")}
                (worker-crash, coordinator-crash, crash-chaos: kills and restarts, replayed from the disk model)
  --mutant      run a deliberately broken core or shell to see a violation: ${[...MUTANTS.keys()].join(", ")}
  --help        this text

Checks: Theorem 1 (final state and outcomes = sequential execution of the committed chain), Lemma 8 (every
copy of a version has one value; a re-execution produces what the first did), Lemma 4, committed once,
receipts stable (given once, never changed, still on disk), liveness once faults stop (A8).
  pnpm sim remora --seeds 5000 --scenario crash-chaos     thousands of seeds with crashes
  pnpm sim remora --scenario crash-chaos --seed 27        replay one seed`

interface Args {
  readonly seeds: number
  readonly firstSeed: number
  readonly scenarios: ReadonlyArray<string>
  readonly mutant: string | undefined
}

const parse = (args: ReadonlyArray<string>): Args => {
  const flags = new Map<string, string>()
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i]!
    const value = args[i + 1]
    if (!flag.startsWith("--") || value === undefined) throw new Error(`bad argument ${flag}`)
    if (!["seeds", "seed", "scenario", "mutant"].includes(flag.slice(2))) throw new Error(`unknown flag ${flag}`)
    flags.set(flag.slice(2), value)
  }
  const int = (name: string) => {
    const raw = flags.get(name)
    if (raw === undefined) return undefined
    const v = Number(raw)
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer`)
    return v
  }
  const scenarios = flags.get("scenario")?.split(",") ?? [...SCENARIOS.keys()]
  for (const s of scenarios) if (!SCENARIOS.has(s)) throw new Error(`unknown scenario ${s}`)
  const mutant = flags.get("mutant")
  if (mutant !== undefined && !MUTANTS.has(mutant)) throw new Error(`unknown mutant ${mutant}`)
  return { seeds: int("seeds") ?? (flags.has("seed") ? 1 : 1000), firstSeed: int("seed") ?? 1, scenarios, mutant }
}

const table = (rows: ReadonlyArray<ScenarioSummary & { readonly ms: number }>): string => {
  const header = [
    "scenario",
    "runs",
    "violations",
    "txs",
    "blocks",
    "rejected",
    "plans adopted",
    "recomputed",
    "lease transfers",
    "duplicates",
    "kills",
    "recoveries",
    "replayed",
    "epochs",
    "ms/run"
  ]
  const lines = rows.map((r) => [
    r.scenario,
    String(r.runs),
    String(r.failures.length),
    String(r.txs),
    String(r.blocks),
    String(r.rejected),
    String(r.adopted),
    String(r.recomputed),
    String(r.leaseTransfers),
    String(r.duplicates),
    String(r.kills),
    String(r.recoveries),
    String(r.replayed),
    String(r.epochs),
    (r.ms / r.runs).toFixed(1)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const fmt = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  return [fmt(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(fmt)].join("\n")
}

export const runRemoraSim = (argv: ReadonlyArray<string>): number => {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(REMORA_SIM_USAGE)
    return 0
  }
  let args: Args
  try {
    args = parse(argv)
  } catch (e) {
    console.error(`${(e as Error).message}\n${REMORA_SIM_USAGE}`)
    return 2
  }
  const rows: Array<ScenarioSummary & { readonly ms: number }> = []
  for (const scenario of args.scenarios) {
    const started = performance.now()
    const summary = runSeeds(
      scenario,
      args.firstSeed,
      args.seeds,
      args.mutant === undefined ? {} : { mutant: args.mutant }
    )
    rows.push({ ...summary, ms: performance.now() - started })
    for (const f of summary.failures.slice(0, MAX_FAILURES_SHOWN)) console.log(`${describeFailure(f)}\n`)
    if (summary.failures.length > MAX_FAILURES_SHOWN) {
      console.log(`... and ${summary.failures.length - MAX_FAILURES_SHOWN} more violations in ${scenario}\n`)
    }
  }
  console.log(table(rows))
  const violations = rows.reduce((n, r) => n + r.failures.length, 0)
  console.log(violations === 0 ? "\nno violations" : `\n${violations} violations`)
  return violations === 0 ? 0 : 1
}
