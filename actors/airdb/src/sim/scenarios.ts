/**
 * The simulator's scenarios and mutants by name: `pnpm sim airdb` and the CI tests both go through here, so a
 * failing seed replays the same way in either.
 */
import type { ClientHooks } from "../client/client.js"
import type { Decision } from "../core/conflict.js"
import { runAirDbSim, type SimOptions, type SimReport } from "./airdb-sim.js"
import { NO_FAULTS } from "./sim-storage.js"

const base: SimOptions = {
  clients: 3,
  txnsPerClient: 25,
  keys: 5,
  readShare: 0.4,
  isolation: "serializable",
  faults: { ...NO_FAULTS, delayMs: [0, 4] },
  store: {
    conflictWindow: 48,
    timely: { snapshotEvery: 6, epsilon: 0.5 },
    snapshotTtlMs: 300,
    layout: { commandSegmentRecords: 24, stateSegmentRecords: 12, metaSegmentRecords: 4 }
  },
  restartMs: [5, 60],
  limitMs: 120_000,
  hooks: {}
}

const faulty = {
  delayMs: [0, 6],
  failBefore: 0.02,
  ambiguous: 0.02,
  crashInAppend: 0.004,
  crashAfterStateRecord: 0.05,
  crashInSnapshot: 0.03
} as const

export const SCENARIOS: ReadonlyMap<string, SimOptions> = new Map<string, SimOptions>([
  ["calm", base],
  ["faults", { ...base, faults: faulty }],
  ["snapshot-isolation", { ...base, isolation: "snapshot", faults: faulty }],
  ["contention", { ...base, clients: 4, keys: 2, readShare: 0.2, faults: { ...faulty, crashInAppend: 0.002 } }]
])

const commitAll = (): Decision => ({ _tag: "Commit" })

/** Deliberately broken clients: each must be caught (a checker that never fails proves nothing). */
export const MUTANTS: ReadonlyMap<string, { readonly hooks: ClientHooks; readonly scenario: string }> = new Map([
  ["no-conflict-check", { hooks: { decide: commitAll }, scenario: "contention" }],
  ["skipped-merge", { hooks: { mergeKeepsOlder: true }, scenario: "calm" }],
  ["ignore-timely-bound", { hooks: { ignoreTimelyBound: true }, scenario: "faults" }]
])

export const runScenario = (
  scenario: string,
  seed: number,
  mutant?: string
): SimReport & { readonly scenario: string; readonly mutant?: string } => {
  const options = SCENARIOS.get(scenario)
  if (options === undefined) throw new Error(`unknown scenario ${scenario}; known: ${[...SCENARIOS.keys()].join(", ")}`)
  const m = mutant === undefined ? undefined : MUTANTS.get(mutant)
  if (mutant !== undefined && m === undefined)
    throw new Error(`unknown mutant ${mutant}; known: ${[...MUTANTS.keys()].join(", ")}`)
  const r = runAirDbSim(seed, m === undefined ? options : { ...options, hooks: m.hooks })
  return { ...r, scenario, ...(mutant === undefined ? {} : { mutant }) }
}

export const replayCommand = (r: { readonly scenario: string; readonly seed: number; readonly mutant?: string }) =>
  `pnpm sim airdb --scenario ${r.scenario} --seed ${r.seed}${r.mutant === undefined ? "" : ` --mutant ${r.mutant}`}`
