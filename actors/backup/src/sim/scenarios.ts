/** The simulator's scenarios: which faults a run draws from, and a seed range runner. */
import type { HintKind } from "./hints.js"
import { MUTANTS } from "./mutants.js"
import { emptyStats, type RunResult, type RunStats, runSim, type Scenario } from "./world.js"

const EVERY_HINT_KIND: Partial<Record<HintKind, number>> = {
  honest: 4,
  empty: 1,
  truncated: 1,
  cut: 1,
  shuffled: 1,
  corrupted: 1,
  spurious: 1,
  lying: 2,
  "other-block": 1,
  garbage: 1
}

const scenario = (s: Scenario): [string, Scenario] => [s.name, s]

export const SCENARIOS: ReadonlyMap<string, Scenario> = new Map([
  scenario({
    name: "honest",
    description: "honest hints on a clean stream: every read served from the prefetch",
    hints: { honest: 1 },
    blockLoss: 0,
    hintLoss: 0,
    duplicates: 0,
    jitterMs: 3,
    maxCrashes: 0,
    forged: false
  }),
  scenario({
    name: "bad-hints",
    description: "empty, truncated, cut, shuffled, corrupted, spurious, lying and misaddressed hints, some lost",
    hints: EVERY_HINT_KIND,
    blockLoss: 0,
    hintLoss: 0.1,
    duplicates: 0,
    jitterMs: 5,
    maxCrashes: 0,
    forged: false
  }),
  scenario({
    name: "stream",
    description: "lost, duplicated and reordered blocks and hints",
    hints: { honest: 3, lying: 1, corrupted: 1 },
    blockLoss: 0.08,
    hintLoss: 0.08,
    duplicates: 0.15,
    jitterMs: 40,
    maxCrashes: 0,
    forged: false
  }),
  scenario({
    name: "crashes",
    description: "crashes and restarts (a new incarnation on what the store holds)",
    hints: { honest: 4, lying: 1, truncated: 1 },
    blockLoss: 0.02,
    hintLoss: 0.02,
    duplicates: 0.05,
    jitterMs: 10,
    maxCrashes: 3,
    forged: false
  }),
  scenario({
    name: "forged",
    description: "one block's published state hash is wrong: the backup stops there, loudly",
    hints: EVERY_HINT_KIND,
    blockLoss: 0.03,
    hintLoss: 0.05,
    duplicates: 0.05,
    jitterMs: 10,
    maxCrashes: 2,
    forged: true
  }),
  scenario({
    name: "chaos",
    description: "every fault at once",
    hints: EVERY_HINT_KIND,
    blockLoss: 0.08,
    hintLoss: 0.1,
    duplicates: 0.15,
    jitterMs: 40,
    maxCrashes: 3,
    forged: false
  })
])

export interface ScenarioSummary extends RunStats {
  readonly scenario: string
  readonly runs: number
  readonly failures: ReadonlyArray<RunResult>
}

export const runSeeds = (
  name: string,
  firstSeed: number,
  seeds: number,
  options: { readonly mutant?: string; readonly stopAtFirstFailure?: boolean } = {}
): ScenarioSummary => {
  const scenario = SCENARIOS.get(name)
  if (scenario === undefined) throw new Error(`unknown scenario ${name}`)
  const hooks = options.mutant === undefined ? {} : MUTANTS.get(options.mutant)
  if (hooks === undefined) throw new Error(`unknown mutant ${options.mutant}`)
  const totals = emptyStats()
  const failures: Array<RunResult> = []
  let runs = 0
  for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
    const result = runSim(seed, scenario, hooks)
    runs++
    for (const key of Object.keys(totals) as Array<keyof RunStats>) totals[key] += result.stats[key]
    if (result.violations.length > 0) {
      failures.push(result)
      if (options.stopAtFirstFailure) break
    }
  }
  return { scenario: name, runs, failures, ...totals }
}

export const describeFailure = (result: RunResult, mutant?: string): string =>
  [
    `seed ${result.seed}, scenario ${result.scenario}: ${result.violations.map((v) => `${v.property}: ${v.detail}`).join("; ")}`,
    ...result.trace.map((line) => `  ${line}`),
    `  replay: pnpm sim ira --scenario ${result.scenario} --seed ${result.seed}${mutant === undefined ? "" : ` --mutant ${mutant}`}`
  ].join("\n")
