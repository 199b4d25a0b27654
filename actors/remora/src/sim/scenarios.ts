/**
 * What the simulator runs: each scenario draws a configuration from the seed (sizes, workload, policy, faults),
 * runs the world and checks it. `pnpm sim remora --scenario S --seed N` replays one run exactly.
 */
import { type CoordinatorParams, defaultCoordinatorParams, type Separation, type Timing } from "../core/coordinator.js"
import { POLICIES, type PolicyName } from "../core/placement.js"
import { Prng } from "../core/prng.js"
import type { WorkloadSpec } from "../workload/generators.js"
import { checkRun, type Violation } from "./checker.js"
import { MUTANTS } from "./mutants.js"
import { runWorld, type SimConfig, type SimHooks } from "./world.js"

export interface RunReport {
  readonly scenario: string
  readonly seed: number
  readonly mutant: string | undefined
  readonly violation: Violation | undefined
  readonly config: SimConfig
  readonly stats: {
    readonly txs: number
    readonly blocks: number
    readonly rejected: number
    readonly adopted: number
    readonly recomputed: number
    readonly leaseTransfers: number
    readonly duplicates: number
    readonly messages: number
    readonly virtualMs: number
    readonly kills: number
    readonly recoveries: number
    readonly replayed: number
    readonly epochs: number
  }
}

const SEPARATIONS: ReadonlyArray<Separation> = ["coordinator", "worker", "none"]
const TIMINGS: ReadonlyArray<Timing> = ["pre-consensus", "post-consensus"]

const drawWorkload = (p: Prng): WorkloadSpec => {
  const costs = {
    statelessCostUs: p.chance(0.2) ? 0 : p.int(0, 3000),
    statefulCostUs: p.chance(0.2) ? 0 : p.int(0, 2000)
  }
  switch (p.int(0, 4)) {
    case 0:
      return {
        kind: "token",
        accounts: p.int(3, 40),
        zipf: p.pick([0, 0.5, 0.9]),
        maxAmount: p.int(10, 800_000),
        ...costs
      }
    case 1:
      return { kind: "tpcc", warehouses: p.int(1, 3), newOrderShare: 0.5, ...costs }
    default:
      return {
        kind: "ycsb",
        keys: p.int(4, 300),
        objectsPerTx: p.int(1, 5),
        zipf: p.pick([0, 0.5, 0.8, 0.9, 0.99]),
        ...costs
      }
  }
}

/** The parts every scenario shares, drawn from the seed: sizes, workload, a calm network. */
const base = (scenario: string, seed: number, p: Prng): SimConfig => {
  const workers = p.int(1, 5)
  return {
    scenario,
    seed,
    workers,
    lateWorkers: 0,
    joinAtMs: 0,
    cores: p.int(1, 3),
    txs: p.int(20, 120),
    arrivalGapMs: p.pick([0.2, 1, 3]),
    workload: drawWorkload(p),
    invalidShare: p.pick([0, 0.1, 0.3]),
    coordinator: { ...defaultCoordinatorParams, seed: p.nextU32(), genesisAtWorkers: p.chance(0.7) },
    blockIntervalMs: p.int(2, 20),
    maxBlockTxs: p.int(1, 40),
    windowMs: p.int(5, 60),
    windowJitterMs: 0,
    rejectRate: 0,
    netDelayMs: [0.05, p.pick([0.5, 2])],
    duplicateRate: 0,
    slowFactor: [],
    retryAfterMs: 500,
    maxTimeMs: 60_000
  }
}

const withFaults = (c: SimConfig, p: Prng): SimConfig => ({
  ...c,
  windowJitterMs: p.pick([0, c.windowMs / 2, c.windowMs * 2]),
  rejectRate: p.pick([0, 0.1, 0.3]),
  netDelayMs: [0.05, p.pick([1, 5, 15])],
  duplicateRate: p.pick([0, 0.05, 0.2]),
  slowFactor: Array.from({ length: c.workers + c.lateWorkers }, () => (p.chance(0.3) ? p.pick([2, 4, 10]) : 1))
})

/**
 * Kills and restarts (`kind`: which processes), with epochs short enough to persist between them, and arrivals
 * spread over the fault period so that work is in flight when a kill lands.
 */
const withCrashes = (c: SimConfig, p: Prng, kind: "workers" | "coordinator" | "chaos"): SimConfig => {
  const untilMs = p.int(100, 1200)
  const txs = p.int(30, 160)
  // Often shorter than the work one worker may have queued after a recovery: the backstop must count any
  // completion as progress and back off, or it starts the replay over forever (finding S2).
  const stallRecoveryMs = p.pick([300, 1000])
  return {
    ...c,
    txs,
    arrivalGapMs: (untilMs / txs) * p.pick([0.5, 1, 1.5]),
    coordinator: { ...c.coordinator, epochBlocks: p.pick([0, 1, 2, 5]), epochRetryMs: p.pick([50, 300]) },
    maxTimeMs: 30_000 + 4 * stallRecoveryMs,
    crashes: {
      untilMs,
      workerKillGapMs: kind === "coordinator" ? 0 : p.pick([40, 120, 400]),
      coordinatorKillGapMs: kind === "workers" ? 0 : p.pick([60, 200, 500]),
      midStepKillShare: p.pick([0, 0.5, 1]),
      restartDelayMs: [2, p.pick([10, 60, 250])],
      presenceDelayMs: p.pick([1, 10, 40]),
      presenceTimeoutMs: p.pick([30, 150, 500]),
      outageGapMs: kind === "chaos" ? p.pick([0, 150, 500]) : 0,
      outageMs: p.int(2, 60),
      lossRate: kind === "chaos" ? p.pick([0, 0.002, 0.01]) : 0,
      stallRecoveryMs,
      epochMs: p.pick([0, 15, 60, 250]),
      clientRetryMs: p.pick([80, 400]),
      pauseGapMs: kind === "chaos" ? p.pick([0, 100, 300]) : 0,
      pauseMs: [5, p.pick([50, 300, 900])],
      coordinatorPauseShare: p.pick([0, 0.3]),
      pauseLoss: p.chance(0.5)
    }
  }
}

/**
 * A policy from one draw, as before `locality` existed: the draw's high bits pick among the first five exactly as
 * `pick` did (so recorded seeds replay the configurations they always had), its low bits send one in six to
 * `locality`.
 */
const anyPolicy = (p: Prng): PolicyName => {
  const draw = p.nextU32()
  const first = POLICIES.filter((policy) => policy !== "locality")
  return draw % 6 === 5 ? "locality" : first[Math.floor((draw / 0x1_0000_0000) * first.length)]!
}

const anyParams = (c: CoordinatorParams, p: Prng): CoordinatorParams => ({
  ...c,
  policy: anyPolicy(p),
  separation: p.pick(SEPARATIONS),
  statelessTiming: p.pick(TIMINGS),
  schedulingTiming: p.pick(TIMINGS)
})

export const SCENARIOS: ReadonlyMap<string, (seed: number) => SimConfig> = new Map([
  // The consensus window as the paper evaluates it: proposals commit in order, SFS, pre-consensus work.
  ["window", (seed: number) => base("window", seed, new Prng(seed))],
  // Rejected and reordered blocks (plans invalidated), message delays, duplicates and slow workers.
  [
    "faults",
    (seed: number) => {
      const p = new Prng(seed)
      return withFaults(base("faults", seed, p), p)
    }
  ],
  // Every placement policy, separation mode and timing, with faults.
  [
    "policies",
    (seed: number) => {
      const p = new Prng(seed)
      const c = withFaults(base("policies", seed, p), p)
      return { ...c, coordinator: anyParams(c.coordinator, p) }
    }
  ],
  // SymArch: every worker schedules every block with the same round-robin policy.
  [
    "symmetric",
    (seed: number) => {
      const p = new Prng(seed)
      const c = withFaults(base("symmetric", seed, p), p)
      return {
        ...c,
        coordinator: {
          ...c.coordinator,
          architecture: "symmetric",
          separation: "none",
          symmetricSchedulingCostUs: p.pick([0, 20, 200])
        }
      }
    }
  ],
  // Workers joining mid-run with no objects (scale-out): plans made for the old worker set are invalidated.
  [
    "scale-out",
    (seed: number) => {
      const p = new Prng(seed)
      const c = base("scale-out", seed, p)
      const joined = { ...c, lateWorkers: p.int(1, 3), joinAtMs: p.int(0, 150) }
      const faulty = withFaults(joined, p)
      return { ...faulty, coordinator: anyParams(faulty.coordinator, p) }
    }
  ],
  // Workers killed at random and restarted as new incarnations (or gone long enough to have LEFT): recovery
  // rolls back to the persisted snapshot and replays; with the network faults.
  [
    "worker-crash",
    (seed: number) => {
      const p = new Prng(seed)
      return withCrashes(withFaults(base("worker-crash", seed, p), p), p, "workers")
    }
  ],
  // The coordinator killed (between steps or inside one) and restarted from its disk; clients resubmit.
  [
    "coordinator-crash",
    (seed: number) => {
      const p = new Prng(seed)
      return withCrashes(withFaults(base("coordinator-crash", seed, p), p), p, "coordinator")
    }
  ],
  // Recovery on a slow machine: one or two slow single-core workers, costly checks (a replay has no tokens:
  // every task checks its own signature), a short stall timeout. Replays take longer than the timeout: the
  // backstop must see completions as progress and back off (finding S2), or it starts over forever.
  [
    "slow-recovery",
    (seed: number) => {
      const p = new Prng(seed)
      const c = withCrashes(withFaults(base("slow-recovery", seed, p), p), p, "workers")
      const workers = p.int(1, 2)
      return {
        ...c,
        workers,
        cores: 1,
        workload: {
          kind: "ycsb",
          keys: p.int(20, 200),
          objectsPerTx: 2,
          zipf: 0.5,
          statelessCostUs: 2500,
          statefulCostUs: 500
        },
        slowFactor: Array.from({ length: workers }, () => 10),
        txs: p.int(100, 160),
        crashes: { ...c.crashes!, stallRecoveryMs: 300 }
      }
    }
  ],
  // Elasticity (§4.7, Alg. 5): workers retired gracefully and spares joining at random points, with the
  // network faults, over every policy, separation mode and timing.
  [
    "elastic",
    (seed: number) => {
      const p = new Prng(seed)
      const c = withFaults(base("elastic", seed, p), p)
      return {
        ...c,
        coordinator: { ...anyParams(c.coordinator, p), epochBlocks: p.pick([0, 0, 2, 5]) },
        elastic: { untilMs: p.int(50, 600), gapMs: p.pick([10, 40, 150]), spares: p.int(0, 3) }
      }
    }
  ],
  // Elasticity while workers crash: retirements and joins also land during a recovery.
  [
    "elastic-crash",
    (seed: number) => {
      const p = new Prng(seed)
      const c = withCrashes(withFaults(base("elastic-crash", seed, p), p), p, "workers")
      return { ...c, elastic: { untilMs: c.crashes!.untilMs, gapMs: p.pick([20, 80, 300]), spares: p.int(0, 3) } }
    }
  ],
  // Both, plus pauses (SIGSTOP), NATS server restarts and message loss, over every policy, separation mode and
  // timing.
  [
    "crash-chaos",
    (seed: number) => {
      const p = new Prng(seed)
      const c = withCrashes(withFaults(base("crash-chaos", seed, p), p), p, "chaos")
      return { ...c, coordinator: anyParams(c.coordinator, p) }
    }
  ]
])

export interface RunOptions {
  readonly mutant?: string
}

export const runScenario = (scenario: string, seed: number, options: RunOptions = {}): RunReport => {
  const make = SCENARIOS.get(scenario)
  if (make === undefined) throw new Error(`unknown scenario ${scenario}; known: ${[...SCENARIOS.keys()].join(", ")}`)
  let hooks: SimHooks = {}
  if (options.mutant !== undefined) {
    const mutant = MUTANTS.get(options.mutant)
    if (mutant === undefined)
      throw new Error(`unknown mutant ${options.mutant}; known: ${[...MUTANTS.keys()].join(", ")}`)
    hooks = mutant
  }
  const config = make(seed)
  const record = runWorld(config, hooks)
  const violation = checkRun(record)
  let leaseTransfers = 0
  let duplicates = 0
  for (const w of record.workers.values()) {
    leaseTransfers += w.stats.leaseTransfersIn
    duplicates += w.stats.duplicates
  }
  const s = record.coordinator.stats
  return {
    scenario,
    seed,
    mutant: options.mutant,
    violation,
    config,
    stats: {
      txs: record.committed.length,
      blocks: s.committed,
      rejected: s.rejected,
      adopted: s.plansAdopted,
      recomputed: s.plansRecomputed,
      leaseTransfers,
      duplicates,
      messages: record.messages,
      virtualMs: record.finishedAtMs ?? config.maxTimeMs,
      kills: record.crashStats.workerKills + record.crashStats.coordinatorKills,
      recoveries: record.crashStats.recoveries,
      replayed: record.crashStats.replayed,
      epochs: record.crashStats.epochsPersisted
    }
  }
}

export interface ScenarioSummary {
  readonly scenario: string
  readonly runs: number
  readonly failures: ReadonlyArray<RunReport>
  readonly txs: number
  readonly blocks: number
  readonly rejected: number
  readonly adopted: number
  readonly recomputed: number
  readonly leaseTransfers: number
  readonly duplicates: number
  readonly kills: number
  readonly recoveries: number
  readonly replayed: number
  readonly epochs: number
}

export const runSeeds = (
  scenario: string,
  firstSeed: number,
  count: number,
  options: RunOptions = {}
): ScenarioSummary => {
  const failures: Array<RunReport> = []
  const totals = {
    txs: 0,
    blocks: 0,
    rejected: 0,
    adopted: 0,
    recomputed: 0,
    leaseTransfers: 0,
    duplicates: 0,
    kills: 0,
    recoveries: 0,
    replayed: 0,
    epochs: 0
  }
  for (let seed = firstSeed; seed < firstSeed + count; seed++) {
    const r = runScenario(scenario, seed, options)
    if (r.violation !== undefined) failures.push(r)
    totals.txs += r.stats.txs
    totals.blocks += r.stats.blocks
    totals.rejected += r.stats.rejected
    totals.adopted += r.stats.adopted
    totals.recomputed += r.stats.recomputed
    totals.leaseTransfers += r.stats.leaseTransfers
    totals.duplicates += r.stats.duplicates
    totals.kills += r.stats.kills
    totals.recoveries += r.stats.recoveries
    totals.replayed += r.stats.replayed
    totals.epochs += r.stats.epochs
  }
  return { scenario, runs: count, failures, ...totals }
}

export const replayCommand = (r: RunReport): string =>
  `pnpm sim remora --scenario ${r.scenario} --seed ${r.seed}${r.mutant === undefined ? "" : ` --mutant ${r.mutant}`}`

export const describeFailure = (r: RunReport): string => {
  const c = r.config
  const params = c.coordinator
  return [
    `VIOLATION of ${r.violation?.property}: ${r.violation?.message}`,
    `  scenario ${r.scenario}, seed ${r.seed}: ${c.workers}+${c.lateWorkers} workers × ${c.cores} cores, ${c.txs} txs of ${c.workload.kind}, policy ${params.policy}, ${params.architecture}, separation ${params.separation}, stateless ${params.statelessTiming}, scheduling ${params.schedulingTiming}`,
    `  reject ${c.rejectRate}, jitter ${c.windowJitterMs} ms, net ${c.netDelayMs.join("-")} ms, duplicates ${c.duplicateRate}`,
    ...(c.crashes === undefined
      ? []
      : [
          `  crashes until ${c.crashes.untilMs} ms: ${r.stats.kills} kills, ${r.stats.recoveries} recoveries (${r.stats.replayed} txs replayed), ${r.stats.epochs} epochs persisted; epochs every ${params.epochBlocks} blocks / ${c.crashes.epochMs} ms, loss ${c.crashes.lossRate}, outages every ${c.crashes.outageGapMs} ms, pauses every ${c.crashes.pauseGapMs} ms`
        ]),
    `  replay: ${replayCommand(r)}`
  ].join("\n")
}
