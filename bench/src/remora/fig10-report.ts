/**
 * Fig. 10 in `pnpm bench remora --fig10 [--quick]`: SFS, round-robin and locality-only, each on a fresh cluster
 * of real processes (fig10.ts), in interleaved rounds (the same traces, seeded per round, for every policy), and
 * what they give per workload (moving-hotspot TPC-C, the Ethereum-like trace):
 *
 * - per policy, mode (offered rate, saturated) and phase of the moving hotspot: throughput, p90 latency, lease
 *   transfers per transaction and the busiest worker's share, median and min–max over the rounds;
 * - per policy and mode, the same over the phases after the first (the hotspot has moved at least once), and
 *   the ratios of round-robin and locality-only over SFS from the rounds (each side measured the same way in the
 *   round): at the offered rate throughput, p90 and transfers; saturated, throughput and transfers;
 * - plots: throughput and p90 over time per policy at the offered rate (round 1) with the phase boundaries
 *   marked, saturated throughput per phase, and transfers per transaction per phase.
 *
 * It is the section `fig10` of remora.json (harness/section.ts): ratios `fig10…`, curves `fig10-…`,
 * `metrics.fig10`.
 */
import {
  type Curve,
  type CurvePoint,
  interleave,
  type MachineReading,
  machineNow,
  type Ratio,
  type Round,
  ratioOf,
  readMachine,
  type SectionPart,
  spreadOf,
  writeSection
} from "../harness/index.js"
import { printTable, round } from "../report.js"
import { smoothed } from "./fig8.js"
import {
  FIG10_MODES,
  FIG10_POLICIES,
  FIG10_TRACES,
  FIG10_WORKLOADS,
  type Fig10Mode,
  type Fig10Run,
  type Fig10Settings,
  type Fig10Workload,
  fig10Settings,
  runFig10Cluster
} from "./fig10.js"

export const FIG10_SECTION = "fig10"

export type Fig10Rounds = ReadonlyArray<Round<Record<string, ReadonlyArray<Fig10Run>>>>

/** The run of `workload` in `mode` among a cluster's runs. */
export const runIn = (runs: ReadonlyArray<Fig10Run>, workload: Fig10Workload, mode: Fig10Mode): Fig10Run => {
  const run = runs.find((r) => r.workload === workload && r.mode === mode)
  if (run === undefined) throw new Error(`fig10: no ${workload} run ${mode}`)
  return run
}

export const runFig10Rounds = async (
  quick: boolean,
  say: (line: string) => void,
  settings: Fig10Settings = fig10Settings(quick)
): Promise<Fig10Rounds> =>
  interleave(
    { quick, label: "remora Fig. 10" },
    Object.fromEntries(
      FIG10_POLICIES.map((policy) => [
        policy,
        async (r: number) => {
          say(
            `Fig. 10 (processes), round ${r + 1}, --policy ${policy}: moving-hotspot TPC-C and the Ethereum-like trace, offered, then saturated`
          )
          let runs = await runFig10Cluster(policy, 100 + r, settings)
          if (runs.some((run) => run.crashes.length > 0) || runs.length < FIG10_MODES.length * FIG10_WORKLOADS.length) {
            // A process died (remora-findings.md F-LMDB): the same cluster and traces once more, the crash recorded.
            const crashed = [...new Set(runs.flatMap((run) => run.crashes))]
            say(`  ${crashed.join(", ")}: running the ${policy} cluster of round ${r + 1} again`)
            runs = (await runFig10Cluster(policy, 100 + r, settings)).map((run) => ({
              ...run,
              crashes: [...crashed.map((c) => `first attempt: ${c}`), ...run.crashes]
            }))
          }
          for (const run of runs) {
            say(
              `  ${run.workload} ${run.mode}: ${round(run.movedTps, 1)} tx/s, p90 ${round(run.movedP90Ms, 0)} ms, ` +
                `${round(run.movedTransfersPerTx, 2)} transfers/tx after the first move; ${run.answered}/${run.submitted} answered`
            )
          }
          return runs
        }
      ])
    ) as Record<string, (r: number) => Promise<ReadonlyArray<Fig10Run>>>
  )

const spread = (values: ReadonlyArray<number>, digits = 3) => {
  const kept = values.filter((x) => Number.isFinite(x))
  if (kept.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, samples: 0 }
  const s = spreadOf(kept)
  return { median: round(s.median, digits), min: round(s.min, digits), max: round(s.max, digits), samples: kept.length }
}

const runsOf = (rounds: Fig10Rounds, policy: string, workload: Fig10Workload, mode: Fig10Mode) =>
  rounds.map((r) => runIn(r.values[policy]!, workload, mode))

const titleCase = (s: string) =>
  s
    .split("-")
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("")

type Headline = readonly [string, string, (r: Fig10Run) => number]
const THROUGHPUT: Headline = [
  "Throughput",
  "completions per second, median over the phases after the first",
  (r) => r.movedTps
]
const P90: Headline = [
  "P90",
  "p90 latency, first submission to receipt, of the phases after the first (ms)",
  (r) => r.movedP90Ms
]
const TRANSFERS: Headline = [
  "Transfers",
  "lease transfers per transaction, phases after the first",
  (r) => r.movedTransfersPerTx
]

/** What the ratios compare per mode: at the offered rate every policy may keep up, so latency too; saturated, throughput. */
const HEADLINES: Readonly<Record<Fig10Mode, ReadonlyArray<Headline>>> = {
  offered: [THROUGHPUT, P90, TRANSFERS],
  saturated: [THROUGHPUT, TRANSFERS]
}

const modeSummary = (runs: ReadonlyArray<Fig10Run>) => ({
  throughputTps: spread(runs.map((r) => r.movedTps)),
  p90Ms: spread(runs.map((r) => r.movedP90Ms)),
  transfersPerTx: spread(runs.map((r) => r.movedTransfersPerTx)),
  perPhase: Array.from({ length: runs[0]?.phases.length ?? 0 }, (_, phase) => {
    const at = runs.map((r) => r.phases[phase]!)
    return {
      phase,
      tps: spread(at.map((q) => q.tps)),
      p90Ms: spread(at.map((q) => q.p90Ms)),
      transfersPerTx: spread(at.map((q) => q.transfersPerTx)),
      busiestWorkerShare: spread(at.map((q) => q.busiestWorkerShare))
    }
  }),
  unanswered: runs.reduce((n, r) => n + r.submitted - r.answered, 0),
  refused: runs.reduce((n, r) => n + r.refused, 0),
  recoveries: runs.reduce((n, r) => n + r.recoveries, 0),
  crashes: runs.flatMap((r) => r.crashes)
})

export const fig10Report = (quick: boolean, rounds: Fig10Rounds, settings: Fig10Settings = fig10Settings(quick)) => {
  const byWorkload = Object.fromEntries(
    FIG10_WORKLOADS.map((workload) => [
      workload,
      {
        trace: FIG10_TRACES[workload],
        policies: Object.fromEntries(
          FIG10_POLICIES.map((policy) => [
            policy,
            Object.fromEntries(FIG10_MODES.map((mode) => [mode, modeSummary(runsOf(rounds, policy, workload, mode))]))
          ])
        )
      }
    ])
  )

  const conditions = {
    figure: "Fig. 10",
    processes:
      "reef run coordinator (--data-dir, window consensus 100 ms, --stall-recovery-ms 0) + 3 reef run workers (--cores 1) + nats-server, a fresh cluster per policy and round",
    load:
      `offered: ${settings.rateTps} tx/s from one gRPC client (open loop), ${settings.phases} phases of ${settings.phaseSeconds} s; ` +
      `saturated: ${settings.inFlight} in flight (closed loop), ${settings.phases} phases of ${settings.saturatedTxsPerPhase} transactions; ` +
      `stateful cost ${settings.statefulCostUs} µs`,
    traces: "the same seeded traces for every policy in a round",
    machine: "2 cores shared with other sessions: measured under load, recorded per round"
  }
  const ratios: Record<string, Ratio> = {}
  const ratioNotes: Array<string> = []
  for (const mode of FIG10_MODES) {
    for (const workload of FIG10_WORKLOADS) {
      for (const policy of FIG10_POLICIES.filter((p) => p !== "sfs")) {
        for (const [name, what, f] of HEADLINES[mode]) {
          const modeName = mode === "saturated" ? "Saturated" : ""
          const ratioName = `${FIG10_SECTION}${titleCase(workload)}${modeName}${name}${titleCase(policy)}OverSfs`
          const num = rounds.map((r) => f(runIn(r.values[policy]!, workload, mode)))
          const den = rounds.map((r) => f(runIn(r.values.sfs!, workload, mode)))
          if (den.some((d) => !(d > 0)) || num.some((n) => !Number.isFinite(n))) {
            ratioNotes.push(
              `${ratioName}: not reported, an SFS value was 0 or a value missing (num ${num}, den ${den})`
            )
            continue
          }
          ratios[ratioName] = ratioOf(
            {
              numerator: `${workload} ${mode}, --policy ${policy}: ${what}`,
              denominator: "the same, --policy sfs",
              conditions
            },
            rounds,
            (v) => f(runIn(v[policy]!, workload, mode)),
            (v) => f(runIn(v.sfs!, workload, mode))
          )
        }
      }
    }
  }

  const metrics = {
    fig10ByWorkload: byWorkload,
    fig10Definition:
      "Fig. 10 on real processes: per policy a fresh reef run coordinator and 3 reef run workers over a " +
      "nats-server take a moving-hotspot TPC-C trace and an Ethereum-like token-transfer trace " +
      "(actors/remora/src/workload/hotspot.ts), the hot set changing every phase: first each offered at a fixed " +
      "rate from one gRPC client (open loop, phases of fixed time: the paper's set-up), then each saturated (closed " +
      "loop, a fixed number in flight, phases of a fixed number of transactions, on fresh traces of the same " +
      "workloads over the objects the first pass left). Per phase: tps = completions within the phase's time " +
      "window per second (saturated: from the first submission of the phase's transactions to the next phase's); " +
      "p90Ms = p90 of first submission to receipt over the phase's transactions; transfersPerTx = the receipts' " +
      "leaseTransfers over the phase's transactions; busiestWorkerShare = share of the phase's transactions on " +
      "the worker that ran the most of them. throughputTps (the median phase), p90Ms, transfersPerTx: over the " +
      "phases after the first (the hotspot has moved at least once). Median and min–max over interleaved rounds. " +
      "Workers run stateful parts on --cores 1 virtual core with a synthetic cost, so a worker that collects the " +
      "hot objects saturates while the others idle, as separate machines would.",
    fig10Settings: settings,
    fig10Paper:
      "the paper's Fig. 10 shows Remora (SFS) alone on 20 s phases at 80% of capacity: throughput holding the " +
      "offered rate through every hotspot change, with only occasional p90 outliers; it runs no baseline on " +
      "these traces (its policy comparison is Fig. 5, where locality-only Zeus collapses onto one worker)",
    ...(ratioNotes.length === 0 ? {} : { fig10RatioNotes: ratioNotes }),
    fig10Runs: rounds.map((r, i) => ({
      round: i + 1,
      busy: r.busy,
      machine: r.machine,
      runs: Object.values(r.values).flatMap((runs) =>
        runs.map((run) => ({
          policy: run.policy,
          workload: run.workload,
          mode: run.mode,
          submitted: run.submitted,
          answered: run.answered,
          refused: run.refused,
          recoveries: run.recoveries,
          crashes: run.crashes,
          phases: run.phases.map((q) => ({
            phase: q.phase,
            fromS: round(q.fromS, 2),
            toS: round(q.toS, 2),
            tps: round(q.tps, 2),
            p50Ms: round(q.p50Ms, 0),
            p90Ms: round(q.p90Ms, 0),
            transfersPerTx: round(q.transfersPerTx, 3),
            busiestWorkerShare: round(q.busiestWorkerShare, 3)
          }))
        }))
      )
    }))
  }
  return { ratios, metrics, curves: fig10Curves(rounds, settings) }
}

/** Vertical marks (two points each, one series per boundary) where the hotspot moves. */
const boundaries = (settings: Fig10Settings, lo: number, hi: number): Array<CurvePoint> =>
  Array.from({ length: settings.phases - 1 }, (_, i) => {
    const x = (i + 1) * settings.phaseSeconds
    const series = `hotspot moves (${x} s)`
    return [
      { series, x, y: lo },
      { series, x, y: hi }
    ]
  }).flat()

/** Per policy and phase: the median and min–max over rounds of `f` of the phase, x = the phase (1-based). */
const perPhasePoints = (
  rounds: Fig10Rounds,
  workload: Fig10Workload,
  mode: Fig10Mode,
  phases: number,
  f: (q: Fig10Run["phases"][number]) => number
): Array<CurvePoint> =>
  FIG10_POLICIES.flatMap((policy) =>
    Array.from({ length: phases }, (_, phase) => {
      const s = spread(runsOf(rounds, policy, workload, mode).map((r) => f(r.phases[phase]!)))
      return { series: policy, x: phase + 1, y: s.median, yMin: s.min, yMax: s.max }
    })
  )

const fig10Curves = (rounds: Fig10Rounds, settings: Fig10Settings): Record<string, Curve> => {
  const curves: Record<string, Curve> = {}
  const where = `${settings.rateTps} tx/s offered, real processes, round 1; measured under load`
  const phaseAxis = {
    title: "phase of the moving hotspot",
    ticks: Array.from({ length: settings.phases }, (_, i) => i + 1)
  }
  for (const workload of FIG10_WORKLOADS) {
    const first = (policy: string) => runIn(rounds[0]!.values[policy]!, workload, "offered")
    const tpsPoints = FIG10_POLICIES.flatMap((policy) =>
      smoothed(first(policy).timeline).map((q) => ({ series: policy, x: q.t, y: round(q.tps, 0) }))
    )
    const maxTps = Math.max(1, ...tpsPoints.map((q) => q.y))
    curves[`${FIG10_SECTION}-${workload}-throughput`] = {
      title: `Fig. 10 (${workload}): throughput as the hotspot moves, per policy, ${where}`,
      x: { title: "time since the load began (s)" },
      y: { title: "completed transactions (tx/s, 1.25 s moving mean)" },
      points: [...tpsPoints, ...boundaries(settings, 0, maxTps)],
      pointMarks: false
    }
    const p90Points = FIG10_POLICIES.flatMap((policy) =>
      first(policy)
        .timeline.filter((q) => q.p90Ms > 0)
        .map((q) => ({ series: policy, x: q.t, y: round(q.p90Ms, 1) }))
    )
    const p90s = p90Points.map((q) => q.y)
    curves[`${FIG10_SECTION}-${workload}-p90`] = {
      title: `Fig. 10 (${workload}): p90 latency as the hotspot moves, per policy, ${where}`,
      x: { title: "time since the load began (s)" },
      y: { title: "p90 latency, submission to receipt (ms, 250 ms buckets)", scale: "log", zero: false },
      points: [...p90Points, ...boundaries(settings, Math.min(...p90s, 1), Math.max(...p90s, 1))],
      pointMarks: false
    }
    curves[`${FIG10_SECTION}-${workload}-saturated-throughput`] = {
      title: `Fig. 10 (${workload}): saturated throughput (${settings.inFlight} in flight) in each phase, median and min–max over ${rounds.length} rounds`,
      x: phaseAxis,
      y: { title: "completed transactions (tx/s)" },
      points: perPhasePoints(rounds, workload, "saturated", settings.phases, (q) => q.tps)
    }
    curves[`${FIG10_SECTION}-${workload}-transfers`] = {
      title: `Fig. 10 (${workload}): lease transfers per transaction in each phase at ${settings.rateTps} tx/s offered, median and min–max over ${rounds.length} rounds`,
      x: phaseAxis,
      y: { title: "lease transfers per transaction" },
      points: perPhasePoints(rounds, workload, "offered", settings.phases, (q) => q.transfersPerTx)
    }
  }
  return curves
}

/** The section as the harness writes it (with the machine over the Fig. 10 part of the run). */
export const fig10Section = (
  quick: boolean,
  command: string,
  machineStart: MachineReading,
  report: ReturnType<typeof fig10Report>
): SectionPart => ({
  info: { command, quick, machine: machineNow(machineStart) },
  ratios: report.ratios,
  metrics: report.metrics,
  curves: report.curves
})

const printFig10 = (report: ReturnType<typeof fig10Report>) => {
  const cell = (s: { median: number; min: number; max: number }) => `${s.median} (${s.min}–${s.max})`
  const rows = FIG10_MODES.flatMap((mode) =>
    FIG10_WORKLOADS.flatMap((workload) =>
      FIG10_POLICIES.map((policy) => {
        const m = report.metrics.fig10ByWorkload[workload]!.policies[policy]![mode]!
        return [`${workload} ${mode}`, policy, cell(m.throughputTps), cell(m.p90Ms), cell(m.transfersPerTx)]
      })
    )
  )
  printTable(
    "Remora: Fig. 10 (real processes, phases after the first; median (min–max) over rounds)",
    ["trace", "policy", "tx/s", "p90 ms", "transfers/tx"],
    rows
  )
  printTable(
    "Fig. 10 ratios over SFS (per round, measured the same way)",
    ["name", "median", "min–max", "rounds"],
    Object.entries(report.ratios).map(([k, v]) => [k, v.median, `${v.min}–${v.max}`, v.repeats])
  )
}

/** `pnpm bench remora --fig10 [--quick]`: Fig. 10 alone, written as its section of remora.json. */
export const runFig10Only = async (quick: boolean): Promise<void> => {
  const started = performance.now()
  const machineStart = readMachine()
  const say = (line: string) => console.log(`  [${((performance.now() - started) / 1000).toFixed(0)} s] ${line}`)
  const report = fig10Report(quick, await runFig10Rounds(quick, say))
  printFig10(report)
  const reruns = process.env.REEF_BENCH_MAX_RERUNS
  const command = `${reruns === undefined ? "" : `REEF_BENCH_MAX_RERUNS=${reruns} `}pnpm bench remora --fig10${quick ? " --quick" : ""}`
  const path = await writeSection("remora", FIG10_SECTION, fig10Section(quick, command, machineStart, report))
  console.log(`\nwrote the ${FIG10_SECTION} section of ${path} and its plots`)
}
