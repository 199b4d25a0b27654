/**
 * Every simulator scenario by name, and a summary over many seeds. The CLI (scripts/sim.ts) and the CI tests
 * both go through here, so a failure seen in either replays the same way in the other.
 */
import { INSTANCE_SCENARIOS, runInstanceSim } from "./instance-sim.js"
import { MUTANTS, type Mutant } from "./mutants.js"
import type { RunReport } from "./report.js"
import { runShellSim, SHELL_SCENARIOS } from "./shell-sim.js"
import { runTobSim, TOB_SCENARIOS } from "./tob-sim.js"

export interface ScenarioOptions {
  /** N; drawn from the seed among 3, 5, 7, 9 when absent. */
  readonly n?: number
  /** A deliberately broken protocol (mutants.ts) to run instead of the real one. */
  readonly mutant?: string
}

export type Scenario = (seed: number, options?: ScenarioOptions) => RunReport

const mutantOf = (name: string | undefined): Mutant => {
  if (name === undefined) return {}
  const m = MUTANTS.get(name)
  if (m === undefined) throw new Error(`unknown mutant ${name}; known: ${[...MUTANTS.keys()].join(", ")}`)
  return m
}

const instanceScenario =
  (name: (typeof INSTANCE_SCENARIOS)[number]): Scenario =>
  (seed, o = {}) => {
    const m = mutantOf(o.mutant)
    if (m.stepInstance === undefined && o.mutant !== undefined) throw new Error(`${o.mutant} only applies to tob-*`)
    const options = {
      ...(o.n === undefined ? {} : { n: o.n }),
      ...(m.stepInstance ? { stepInstance: m.stepInstance } : {})
    }
    return { ...runInstanceSim(name, seed, options), mutant: o.mutant }
  }

const tobScenario =
  (name: (typeof TOB_SCENARIOS)[number]): Scenario =>
  (seed, o = {}) => {
    const options = { ...(o.n === undefined ? {} : { n: o.n }), ...mutantOf(o.mutant) }
    return { ...runTobSim(name, seed, options), mutant: o.mutant }
  }

const shellScenario =
  (name: (typeof SHELL_SCENARIOS)[number]): Scenario =>
  (seed, o = {}) => {
    const options = { ...(o.n === undefined ? {} : { n: o.n }), ...mutantOf(o.mutant) }
    return { ...runShellSim(name, seed, options), mutant: o.mutant }
  }

export const SCENARIOS: ReadonlyMap<string, Scenario> = new Map<string, Scenario>([
  ...INSTANCE_SCENARIOS.map((name) => [name, instanceScenario(name)] as const),
  ...TOB_SCENARIOS.map((name) => [name, tobScenario(name)] as const),
  ...SHELL_SCENARIOS.map((name) => [name, shellScenario(name)] as const)
])

export interface ScenarioSummary {
  readonly scenario: string
  readonly runs: number
  readonly failures: ReadonlyArray<RunReport>
  readonly maxDecisionRound: number
  readonly instances: number
  readonly decisions: number
  readonly deliveries: number
  readonly selfCrashes: number
  readonly rejoins: number
  readonly learnerRejoins: number
  readonly lostDecisions: number
  readonly messages: number
  readonly droppedMessages: number
}

/** Runs `count` consecutive seeds from `firstSeed`; keeps every failing report. */
export const runSeeds = (
  scenario: string,
  firstSeed: number,
  count: number,
  options: ScenarioOptions = {}
): ScenarioSummary => {
  const run = SCENARIOS.get(scenario)
  if (run === undefined) throw new Error(`unknown scenario ${scenario}; known: ${[...SCENARIOS.keys()].join(", ")}`)
  const failures: Array<RunReport> = []
  let maxDecisionRound = 0
  let instances = 0
  let decisions = 0
  let deliveries = 0
  let selfCrashes = 0
  let rejoins = 0
  let learnerRejoins = 0
  let lostDecisions = 0
  let messages = 0
  let droppedMessages = 0
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const r = run(seed, options)
    if (r.violation !== undefined) failures.push(r)
    maxDecisionRound = Math.max(maxDecisionRound, r.stats.maxDecisionRound)
    instances += r.stats.instances
    decisions += r.stats.decisions
    deliveries += r.stats.deliveries
    selfCrashes += r.stats.selfCrashes
    rejoins += r.stats.rejoins
    learnerRejoins += r.stats.learnerRejoins
    lostDecisions += r.stats.lostDecisions ?? 0
    messages += r.stats.messages
    droppedMessages += r.stats.droppedMessages
  }
  return {
    scenario,
    runs: count,
    failures,
    maxDecisionRound,
    instances,
    decisions,
    deliveries,
    selfCrashes,
    rejoins,
    learnerRejoins,
    lostDecisions,
    messages,
    droppedMessages
  }
}
