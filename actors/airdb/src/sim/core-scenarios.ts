/**
 * The core simulator's scenarios and deliberately broken cores by name: `pnpm sim airdb-core` and the CI test
 * both go through here, so a failing seed replays the same way in either.
 */
import { type CoreVariant, STANDARD_VARIANT } from "../core/client-state.js"
import type { StoreConfig } from "../core/coordination.js"
import { type CoreSimOptions, type CoreSimReport, runCoreSim } from "./core-sim.js"

const store: StoreConfig = {
  formatVersion: 1,
  conflictWindow: 48,
  timely: { snapshotEvery: 6, epsilon: 0.5 },
  snapshotTtlMs: 300,
  layout: { commandSegmentRecords: 24, stateSegmentRecords: 12, metaSegmentRecords: 4 }
}

const calm: CoreSimOptions = {
  clients: 3,
  txnsPerClient: 30,
  keys: 4,
  readShare: 0.4,
  getShare: 0.25,
  delayMs: [0, 4],
  failBefore: 0,
  ambiguous: 0,
  lateLanding: 0,
  store,
  variant: STANDARD_VARIANT,
  limitMs: 600_000
}

const faulty: Partial<CoreSimOptions> = {
  delayMs: [0, 8],
  failBefore: 0.03,
  ambiguous: 0.03,
  lateLanding: 0.5,
  crashes: { everyMs: [200, 1_500], forMs: [0, 0] }
}

export const CORE_SCENARIOS: ReadonlyMap<string, CoreSimOptions> = new Map<string, CoreSimOptions>([
  ["calm", calm],
  // Lost, failed and ambiguous calls (some appends land after their client heard a timeout), answers in any
  // order, and processes killed and restarted cold.
  ["faults", { ...calm, ...faulty }],
  ["contention", { ...calm, ...faulty, clients: 4, keys: 2, readShare: 0.2 }],
  // The issue's nemesis: processes paused for long stretches (also mid tail sync), storage stalls, kills, and
  // Gets beside transactions, with snapshots every few entries (adoptions racing reads).
  [
    "pauses",
    {
      ...calm,
      ...faulty,
      getShare: 0.4,
      store: { ...store, timely: { snapshotEvery: 3, epsilon: 0.5 } },
      pauses: { everyMs: [50, 400], forMs: [20, 1_500] },
      stalls: { everyMs: [200, 2_000], forMs: [20, 2_000] }
    }
  ]
])

/** A broken core: the standard decisions with one swapped. */
const broken = (variant: Partial<CoreVariant>): CoreVariant => ({ ...STANDARD_VARIANT, ...variant })

/** Each must be caught by some seed of its scenario (a checker that never fails proves nothing). */
export const CORE_MUTANTS: ReadonlyMap<
  string,
  { readonly variant: CoreVariant; readonly scenario: string; readonly caughtBy: RegExp }
> = new Map([
  // A Get answered from whatever tail the client has, without a bus: a stale read.
  ["get-without-sync", { variant: broken({ getRidesBus: false }), scenario: "calm", caughtBy: /^history: / }],
  // A read takes a snapshot's state although the tail holds a newer one (a snapshot older than the read point).
  [
    "snapshot-over-tail",
    { variant: broken({ tailFirst: false }), scenario: "calm", caughtBy: /^(history: |state = replay)/ }
  ],
  // Adopting a chain drops the tail up to the client's tail, not the chain's end: a snapshot older than the
  // read point stands in for the writes after it.
  [
    "adopt-covers-tail",
    { variant: broken({ adoptCoversTail: true }), scenario: "calm", caughtBy: /^(history: |state = replay)/ }
  ],
  // A commit acknowledged when its append is sent, before the log holds it.
  [
    "ack-before-durable",
    { variant: broken({ ackOnSend: true }), scenario: "faults", caughtBy: /^(no lost commit|history: )/ }
  ],
  [
    "no-conflict-check",
    { variant: broken({ decide: () => ({ _tag: "Commit" }) }), scenario: "contention", caughtBy: /^history: / }
  ],
  ["ignore-timely-bound", { variant: broken({ admits: () => true }), scenario: "faults", caughtBy: /^timely-snapshot/ }]
])

export const runCoreScenario = (
  scenario: string,
  seed: number,
  mutant?: string
): CoreSimReport & { readonly scenario: string; readonly mutant?: string } => {
  const options = CORE_SCENARIOS.get(scenario)
  if (options === undefined) {
    throw new Error(`unknown scenario ${scenario}; known: ${[...CORE_SCENARIOS.keys()].join(", ")}`)
  }
  const m = mutant === undefined ? undefined : CORE_MUTANTS.get(mutant)
  if (mutant !== undefined && m === undefined) {
    throw new Error(`unknown mutant ${mutant}; known: ${[...CORE_MUTANTS.keys()].join(", ")}`)
  }
  const r = runCoreSim(seed, m === undefined ? options : { ...options, variant: m.variant })
  return { ...r, scenario, ...(mutant === undefined ? {} : { mutant }) }
}

export const coreReplayCommand = (r: { readonly scenario: string; readonly seed: number; readonly mutant?: string }) =>
  `pnpm sim airdb-core --scenario ${r.scenario} --seed ${r.seed}${r.mutant === undefined ? "" : ` --mutant ${r.mutant}`}`
