/**
 * The simulator's scenarios and mutants by name: `pnpm sim airdb` and the CI tests both go through here, so a
 * failing seed replays the same way in either.
 */
import type { ClientHooks } from "../client/client.js"
import { type CoreVariant, STANDARD_VARIANT } from "../core/client-state.js"
import type { Decision } from "../core/conflict.js"
import { runAirDbSim, type SimOptions, type SimReport } from "./airdb-sim.js"
import { NO_FAULTS } from "./sim-storage.js"

const base: SimOptions = {
  clients: 3,
  txnsPerClient: 25,
  keys: 5,
  readShare: 0.4,
  getShare: 0.15,
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
  ["contention", { ...base, clients: 4, keys: 2, readShare: 0.2, faults: { ...faulty, crashInAppend: 0.002 } }],
  // Point reads racing chain adoption: Gets of hot keys (in the tail), a block cache too small to hold a block
  // (every snapshot read goes to storage) and a snapshot every few entries, so chains are adopted (and tails
  // rebased) while reads are in flight.
  [
    "get-vs-adopt",
    {
      ...base,
      clients: 4,
      keys: 3,
      readShare: 0.2,
      getShare: 0.5,
      cacheBytes: 256,
      shuffle: true,
      faults: { ...NO_FAULTS, delayMs: [0, 0] },
      store: { ...base.store, timely: { snapshotEvery: 3, epsilon: 0.5 } }
    }
  ],
  // The issue's nemesis: clients SIGSTOPped (also during a tail sync), storage stalls and restarts, snapshots
  // racing appends (a small B), and point reads through `Get` beside transactions.
  [
    "pauses",
    {
      ...base,
      txnsPerClient: 40,
      getShare: 0.3,
      cacheBytes: 1_024,
      shuffle: true,
      faults: {
        ...faulty,
        pauses: { everyMs: [50, 400], forMs: [50, 1_500] },
        stalls: { everyMs: [200, 2_000], forMs: [20, 2_000] },
        outages: { everyMs: [500, 4_000], forMs: [10, 500] }
      },
      limitMs: 600_000
    }
  ]
])

const commitAll = (): Decision => ({ _tag: "Commit" })

/**
 * Deliberately broken clients, each a variant of the core's decisions (production code has no switch for
 * them): each must be caught (a checker that never fails proves nothing).
 */
const broken = (variant: Partial<CoreVariant>): ClientHooks => ({ variant: { ...STANDARD_VARIANT, ...variant } })

export const MUTANTS: ReadonlyMap<string, { readonly hooks: ClientHooks; readonly scenario: string }> = new Map([
  ["no-conflict-check", { hooks: broken({ decide: commitAll }), scenario: "contention" }],
  // ⊕ keeps the older state of a key both merged snapshots hold.
  ["skipped-merge", { hooks: broken({ mergeKey: (older) => older }), scenario: "calm" }],
  ["ignore-timely-bound", { hooks: broken({ admits: () => true }), scenario: "faults" }]
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
