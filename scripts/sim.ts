/**
 * Seeded deterministic simulation of a protocol core (TigerBeetle VOPR style).
 *
 *   pnpm sim popuc --seeds 10000                 every scenario, seeds 1..10000, N drawn from each seed
 *   pnpm sim popuc --scenario crash --n 5 --seeds 500 --seed 77
 *   pnpm sim popuc --scenario omission --n 7 --seed 1234     replay one seed (prints the failure trace)
 *   pnpm sim popuc --scenario shell-crash-restart --seeds 1000   the real engine loop and rejoin core
 *   pnpm sim popuc --scenario shell-async --n 3 --mutant replay-after-collapse   a caught broken shell
 *   pnpm sim remora --seeds 2000                 Remora's coordinator and workers (actors/remora/src/sim)
 *   pnpm sim remora --scenario faults --seed 77  replay one seed
 *   pnpm sim airdb --seeds 200                   AirDB's clients over simulated storage (actors/airdb/src/sim)
 *   pnpm sim airdb --scenario faults --seed 7    replay one seed
 *   pnpm sim airdb-core --seeds 2000             AirDB's client core over a model of storage (actors/airdb/src/sim)
 *   pnpm sim airdb-core --scenario pauses --seed 7   replay one seed
 *   pnpm sim ira --seeds 500                     Ira's backup follower over a faulty stream (actors/backup/src/sim)
 *   pnpm sim ira --scenario chaos --seed 7       replay one seed
 *
 * Prints a summary table and every violation with the command that replays it; exits 1 on any violation.
 */
import { argv, exit } from "node:process"
import { runAirDbSimCli } from "../actors/airdb/src/sim/cli.js"
import { runAirDbCoreSimCli } from "../actors/airdb/src/sim/core-cli.js"
import { runIraSim } from "../actors/backup/src/sim/cli.js"
import { MUTANTS } from "../actors/nic/src/sim/mutants.js"
import { describeFailure } from "../actors/nic/src/sim/report.js"
import { runSeeds, SCENARIOS, type ScenarioSummary } from "../actors/nic/src/sim/scenarios.js"
import { runRemoraSim } from "../actors/remora/src/sim/cli.js"

const CORES = ["popuc"] as const
const MAX_FAILURES_SHOWN = 3

interface Args {
  readonly core: string
  readonly seeds: number
  readonly firstSeed: number
  readonly n: number | undefined
  readonly scenarios: ReadonlyArray<string>
  readonly mutant: string | undefined
}

const usage = `usage: pnpm sim popuc|remora|airdb|airdb-core|ira ... (pnpm sim remora --help, pnpm sim airdb --help, pnpm sim airdb-core --help, pnpm sim ira --help)
       pnpm sim popuc [--seeds N] [--seed S] [--n 3|5|7|9] [--scenario a,b] [--mutant name]
  --seeds N     how many consecutive seeds per scenario (default 1000, or 1 with --seed)
  --seed S      first seed (default 1)
  --n N         number of replicas (default: drawn from each seed)
  --scenario    comma-separated subset of: ${[...SCENARIOS.keys()].join(", ")}
  --mutant      run a deliberately broken protocol to see a violation: ${[...MUTANTS.keys()].join(", ")}`

const parseArgs = (args: ReadonlyArray<string>): Args => {
  const [core, ...rest] = args
  if (core === undefined || !(CORES as ReadonlyArray<string>).includes(core)) throw new Error(usage)
  const flags = new Map<string, string>()
  for (let i = 0; i < rest.length; i += 2) {
    const flag = rest[i]!
    const value = rest[i + 1]
    if (!flag.startsWith("--") || value === undefined) throw new Error(`bad argument ${flag}\n${usage}`)
    flags.set(flag.slice(2), value)
  }
  const int = (name: string): number | undefined => {
    const raw = flags.get(name)
    if (raw === undefined) return undefined
    const v = Number(raw)
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer`)
    return v
  }
  for (const name of flags.keys()) {
    if (!["seeds", "seed", "n", "scenario", "mutant"].includes(name))
      throw new Error(`unknown flag --${name}\n${usage}`)
  }
  const n = int("n")
  if (n !== undefined && (n < 1 || n % 2 === 0)) throw new Error("--n must be odd (N = 2t+1)")
  const scenarios = flags.get("scenario")?.split(",") ?? [...SCENARIOS.keys()]
  for (const s of scenarios) if (!SCENARIOS.has(s)) throw new Error(`unknown scenario ${s}\n${usage}`)
  return {
    core,
    seeds: int("seeds") ?? (flags.has("seed") ? 1 : 1000),
    firstSeed: int("seed") ?? 1,
    n,
    scenarios,
    mutant: flags.get("mutant")
  }
}

const table = (rows: ReadonlyArray<ScenarioSummary & { readonly ms: number }>): string => {
  const header = [
    "scenario",
    "runs",
    "violations",
    "max round",
    "instances",
    "deliveries",
    "self-crashes",
    "rejoins",
    "learned",
    "lost",
    "dropped msgs",
    "ms/run"
  ]
  const lines = rows.map((r) => [
    r.scenario,
    String(r.runs),
    String(r.failures.length),
    String(r.maxDecisionRound),
    String(r.instances),
    String(r.deliveries),
    String(r.selfCrashes),
    String(r.rejoins),
    String(r.learnerRejoins),
    String(r.lostDecisions),
    String(r.droppedMessages),
    (r.ms / r.runs).toFixed(2)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const fmt = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  return [fmt(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(fmt)].join("\n")
}

const main = (): number => {
  const args = parseArgs(argv.slice(2))
  const rows: Array<ScenarioSummary & { readonly ms: number }> = []
  for (const scenario of args.scenarios) {
    const started = performance.now()
    const options = {
      ...(args.n === undefined ? {} : { n: args.n }),
      ...(args.mutant === undefined ? {} : { mutant: args.mutant })
    }
    const summary = runSeeds(scenario, args.firstSeed, args.seeds, options)
    rows.push({ ...summary, ms: performance.now() - started })
    for (const failure of summary.failures.slice(0, MAX_FAILURES_SHOWN)) console.log(`${describeFailure(failure)}\n`)
    if (summary.failures.length > MAX_FAILURES_SHOWN) {
      console.log(`... and ${summary.failures.length - MAX_FAILURES_SHOWN} more violations in ${scenario}\n`)
    }
  }
  console.log(table(rows))
  const violations = rows.reduce((sum, r) => sum + r.failures.length, 0)
  console.log(violations === 0 ? "\nno violations" : `\n${violations} violations`)
  return violations === 0 ? 0 : 1
}

/** `pnpm sim --help`, `pnpm sim popuc --help`: the usage on stdout, exit 0 (each other core answers its own). */
const wantsHelp = (args: ReadonlyArray<string>) =>
  args.length === 0 ||
  ((args[0] === "popuc" || args[0]?.startsWith("-")) && args.some((a) => a === "--help" || a === "-h"))

try {
  if (wantsHelp(argv.slice(2))) {
    console.log(usage)
    exit(0)
  }
  exit(
    argv[2] === "remora"
      ? runRemoraSim(argv.slice(3))
      : argv[2] === "airdb"
        ? runAirDbSimCli(argv.slice(3))
        : argv[2] === "airdb-core"
          ? runAirDbCoreSimCli(argv.slice(3))
          : argv[2] === "ira"
            ? runIraSim(argv.slice(3))
            : main()
  )
} catch (e) {
  console.error(e instanceof Error ? e.message : e)
  exit(2)
}
