/**
 * Fig. 9 in `pnpm bench remora --fig9 [--quick]`: the elastic cluster (`--autoscale 2..3`, one spare) and the
 * same three workers as a fixed pool run the same load profile in interleaved rounds (remora/fig9.ts), and
 * what they give, as the section `fig9` of remora.json:
 *
 * - `elasticScaleOutSeconds`, `elasticP90InflationDuringScaling` (goal <= 1.5) and `stallSeconds` (goal 0),
 *   median and min–max over the rounds, each beside the fixed pool's figure of the same round;
 * - the ratio of the elastic run's p90 inside the transitions over the fixed pool's in the same windows;
 * - the plots: throughput and p50/p90 over time of the first round, with the active pool size on a second axis.
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
  type Fig9Autoscale,
  type Fig9Mode,
  type Fig9Profile,
  type Fig9Run,
  type Fig9Work,
  profileSeconds,
  rateAt,
  roundMetrics,
  runFig9,
  SETTLE_S,
  spikeEndS,
  spikeStartS
} from "./fig9.js"

/**
 * Fig. 9 is a section of remora.json (harness/section.ts): its ratios are named `fig9…`, its curves `fig9-…`, its
 * metrics are `metrics.fig9`; `pnpm bench remora --fig9 [--quick]` measures and rewrites it alone.
 */
export const FIG9_SECTION = "fig9"

/** The paper's 40k -> 60k -> 40k TPS, scaled to 80 -> 120 -> 80 tx/s on this 2-core machine. */
export const fig9Profile = (quick: boolean): Fig9Profile =>
  quick
    ? { baseTps: 80, spikeTps: 120, beforeS: 15, warmupS: 5, spikeS: 18, afterS: 22 }
    : { baseTps: 80, spikeTps: 120, beforeS: 20, warmupS: 5, spikeS: 30, afterS: 30 }

/**
 * 16 virtual cores per worker and 300 ms of stateful work per transaction: 53 tx/s per worker, so 2 workers
 * carry the base rate at 75% and not the spike (113%), and 3 carry the spike at 75%.
 */
export const FIG9_WORK: Fig9Work = { cores: 16, statefulCostUs: 300_000, keys: 10_000, objectsPerTx: 2 }

/**
 * Calibrated on this machine (fixed pools, 03:47-03:50 UTC, load average 4-8): the mean load P per active
 * worker was ~5.0 M µs (4.2-5.9) for 2 workers at 80 tx/s and for 3 at 120 tx/s, ~3.4 M µs (2.4-4.3) for 3 at
 * 80 tx/s; 2 workers at 120 tx/s pass 7.5 M µs within a second and keep growing (their backlog). High 7 M and
 * low 4 M sit between those.
 */
export const FIG9_AUTOSCALE: Fig9Autoscale = {
  min: 2,
  max: 3,
  highUs: 7_000_000,
  lowUs: 4_000_000,
  sustain: 4,
  coolDownMs: 3_000,
  everyMs: 250
}

const MODES: ReadonlyArray<Fig9Mode> = ["elastic", "fixed"]

export type Fig9Rounds = ReadonlyArray<Round<Record<Fig9Mode, Fig9Run>>>

export const runFig9Rounds = async (quick: boolean, say: (line: string) => void): Promise<Fig9Rounds> =>
  interleave(
    { quick, label: "remora Fig. 9" },
    Object.fromEntries(
      MODES.map((mode) => [
        mode,
        async (r: number) => {
          say(
            `Fig. 9 (processes), round ${r + 1}, ${mode === "elastic" ? "--autoscale 2..3 (2 active + 1 spare)" : "fixed pool of 3"}: ` +
              `${fig9Profile(quick).baseTps} -> ${fig9Profile(quick).spikeTps} -> ${fig9Profile(quick).baseTps} tx/s`
          )
          const run = await runFig9({
            mode,
            seed: 90 + r,
            profile: fig9Profile(quick),
            work: FIG9_WORK,
            autoscale: FIG9_AUTOSCALE,
            workers: FIG9_AUTOSCALE.max,
            windowMs: 100,
            epochMs: 1_000
          })
          const e = run.events
          say(
            mode === "elastic"
              ? `  scale-outs ${run.scaleOuts}, scale-ins ${run.scaleIns}; ${e.spare} served at ${fmt(e.newWorkerServingS)} s ` +
                  `(spike at ${spikeStartS(run.profile)} s); ${e.retiredWorker ?? "none"} retired at ${fmt(e.retiredS)} s ` +
                  `(exit ${e.retiredExitCode}); recoveries ${run.recoveries}`
              : `  ${run.answered}/${run.submitted} answered; recoveries ${run.recoveries}`
          )
          say(`  state equal to the sequential reference: ${run.stateMatchesReference ?? "state never complete"}`)
          return run
        }
      ])
    ) as Record<Fig9Mode, (r: number) => Promise<Fig9Run>>
  )

const fmt = (x: number | undefined) => (x === undefined ? "-" : x.toFixed(2))

const spread = (values: ReadonlyArray<number>, digits = 3) => {
  const kept = values.filter((x) => Number.isFinite(x))
  const shown = values.map((x) => (Number.isFinite(x) ? round(x, digits) : null))
  if (kept.length === 0) return { median: null, min: null, max: null, values: shown, samples: 0 }
  const s = spreadOf(kept)
  return {
    median: round(s.median, digits),
    min: round(s.min, digits),
    max: round(s.max, digits),
    values: shown,
    samples: kept.length
  }
}

/** Median of the pool's mean load P over [fromS, toS) (what the thresholds were calibrated against). */
const loadIn = (run: Fig9Run, fromS: number, toS: number) => {
  const xs = run.pool.filter((p) => p.t >= fromS && p.t < toS).map((p) => p.meanLoadUs)
  return xs.length === 0 ? null : Math.round(spreadOf(xs).median)
}

const loadByPhase = (run: Fig9Run) => {
  const p = run.profile
  const served = run.events.newWorkerServingS
  const retired = run.events.retiredS
  return {
    before: loadIn(run, p.warmupS, spikeStartS(p)),
    spikeBeforeScaleOut: served === undefined ? null : loadIn(run, spikeStartS(p), served),
    spike: loadIn(run, (served ?? spikeStartS(p)) + SETTLE_S, spikeEndS(p)),
    afterBeforeScaleIn: loadIn(run, spikeEndS(p), run.events.retireDecisionS ?? profileSeconds(p)),
    after: loadIn(run, (retired ?? spikeEndS(p)) + SETTLE_S, profileSeconds(p))
  }
}

export const fig9Report = (quick: boolean, rounds: Fig9Rounds) => {
  const profile = fig9Profile(quick)
  const perRound = rounds.map((r) => roundMetrics(r.values.elastic, r.values.fixed))
  const conditions = {
    figure: "Fig. 9",
    processes:
      "reef run coordinator (--data-dir, window consensus 100 ms, --epoch-ms 1000) + 3 reef run workers + nats-server",
    load:
      `uniform YCSB (${FIG9_WORK.objectsPerTx} objects, ${FIG9_WORK.keys} keys), signed, one gRPC client, open loop: ` +
      `${profile.baseTps} tx/s for ${profile.beforeS} s, ${profile.spikeTps} tx/s for ${profile.spikeS} s, ` +
      `${profile.baseTps} tx/s for ${profile.afterS} s (the paper: 40k -> 60k -> 40k TPS)`,
    work:
      `${FIG9_WORK.statefulCostUs / 1000} ms of stateful work per transaction on ${FIG9_WORK.cores} virtual cores ` +
      `per worker (${round((FIG9_WORK.cores * 1e6) / FIG9_WORK.statefulCostUs, 1)} tx/s per worker): 2 workers do not ` +
      "carry the spike, 3 do",
    elastic:
      `--autoscale ${FIG9_AUTOSCALE.min}..${FIG9_AUTOSCALE.max} --autoscale-high ${FIG9_AUTOSCALE.highUs} ` +
      `--autoscale-low ${FIG9_AUTOSCALE.lowUs} --autoscale-sustain ${FIG9_AUTOSCALE.sustain} ` +
      `--autoscale-cooldown-ms ${FIG9_AUTOSCALE.coolDownMs} --autoscale-every-ms ${FIG9_AUTOSCALE.everyMs}; ` +
      "3 worker processes, 2 active at start and 1 pre-launched spare",
    baseline: "the same 3 worker processes without --autoscale (all active: a pool sized for the peak)",
    machine: "2 cores shared with other sessions: measured under load (recorded per round)"
  }
  const ratios: Record<string, Ratio> = {}
  const ratioNotes: Array<string> = []
  const elasticP90 = perRound.map((m) => m.transitionP90Ms)
  const fixedP90 = perRound.map((m) => m.fixedTransitionP90Ms)
  if ([...elasticP90, ...fixedP90].every((x) => Number.isFinite(x) && x > 0)) {
    ratios.fig9TransitionP90ElasticOverFixedPool = ratioOf(
      {
        numerator:
          "p90 latency (submission to receipt) of the completions inside the scaling transitions, elastic pool",
        denominator: "the same windows of the same profile, fixed pool of 3 workers",
        conditions
      },
      rounds,
      (v) => roundMetrics(v.elastic, v.fixed).transitionP90Ms,
      (v) => roundMetrics(v.elastic, v.fixed).fixedTransitionP90Ms
    )
  } else {
    ratioNotes.push(
      `fig9TransitionP90ElasticOverFixedPool: not reported, a round had no transition to read (elastic ${elasticP90}, fixed ${fixedP90})`
    )
  }
  const phases = ["before", "spike", "after"] as const
  const metrics = {
    elasticScaleOutSeconds: spread(perRound.map((m) => m.scaleOutSeconds)),
    elasticScaleOutSecondsDefinition:
      "seconds from the start of the spike (the offered rate rising from the base by half) to the first receipt " +
      "executed by the activated spare: detection (--autoscale-sustain observations above --autoscale-high, every " +
      "--autoscale-every-ms), activation and the first block placed on it. Median and min–max over interleaved " +
      "rounds; NaN (null) in a round where the spare never served or served before the spike",
    elasticScaleInSeconds: spread(perRound.map((m) => m.scaleInSeconds)),
    elasticScaleInSecondsDefinition:
      "seconds from the end of the spike (the rate falling back) to the coordinator's log of the worker retired " +
      "(Alg. 5 done: drained, an epoch ended, its objects reclaimed); its process exits 0 right after",
    elasticP90InflationDuringScaling: { ...spread(perRound.map((m) => m.p90Inflation)), goal: "<= 1.5" },
    elasticP90InflationByTransition: {
      scaleOut: spread(
        perRound.map((m) => m.transitions.find((w) => w.name === "scale-out")?.p90Inflation ?? Number.NaN)
      ),
      scaleIn: spread(perRound.map((m) => m.transitions.find((w) => w.name === "scale-in")?.p90Inflation ?? Number.NaN))
    },
    fixedPoolP90InflationSameWindows: spread(perRound.map((m) => m.fixedP90Inflation)),
    elasticP90InflationDuringScalingDefinition:
      "p90 latency (first submission to receipt) of the completions inside the transitions over the p90 of the " +
      `steady stretch before the spike (${profile.warmupS}-${profile.beforeS} s). Transitions: from the spike's ` +
      `start to ${SETTLE_S} s after the spare's first receipt, and from the retire decision (the coordinator's ` +
      `log) to ${SETTLE_S} s after the worker was retired. fixedPoolP90InflationSameWindows: the fixed pool of ` +
      "the same round read in the same windows (what the spike alone does to a pool sized for it)",
    stallSeconds: { ...spread(perRound.map((m) => m.stallSeconds)), goal: 0 },
    longestGapSeconds: {
      elastic: spread(perRound.map((m) => m.longestGapSeconds)),
      fixed: spread(perRound.map((m) => m.fixedLongestGapSeconds)),
      elasticAtS: perRound.map((m) => round(m.longestGapAtS, 2))
    },
    stallSecondsDefinition:
      "the longest stretch with no completion at all while load is offered (from the end of the warm-up to the " +
      "end of the profile), elastic run, minus the same of the fixed pool in the same round (the machine's own " +
      "pauses), floored at 0; longestGapSeconds has both",
    steadyP90Ms: {
      elastic: spread(
        perRound.map((m) => m.steadyP90Ms),
        1
      ),
      fixed: spread(
        perRound.map((m) => m.fixedSteadyP90Ms),
        1
      )
    },
    transitionP90Ms: {
      elastic: spread(
        perRound.map((m) => m.transitionP90Ms),
        1
      ),
      fixed: spread(
        perRound.map((m) => m.fixedTransitionP90Ms),
        1
      )
    },
    spikeP90Ms: {
      elastic: spread(
        perRound.map((m) => m.spikeP90Ms),
        1
      ),
      fixed: spread(
        perRound.map((m) => m.fixedSpikeP90Ms),
        1
      )
    },
    spikeP90MsNote: `p90 over the whole spike and ${SETTLE_S} s after it, beside the transitions' windows`,
    throughputByPhase: Object.fromEntries(
      phases.map((ph) => [
        ph,
        {
          offered: perRound[0]?.throughput[ph].offered,
          elastic: spread(
            perRound.map((m) => m.throughput[ph].elastic),
            1
          ),
          fixed: spread(
            perRound.map((m) => m.throughput[ph].fixed),
            1
          )
        }
      ])
    ),
    throughputByPhaseNote:
      `completions per second: before = the steady stretch; spike = from ${SETTLE_S} s after the spare served to ` +
      `the end of the spike; after = from ${SETTLE_S} s after the retirement to the end`,
    loadPByPhaseUs: {
      elastic: rounds.map((r) => loadByPhase(r.values.elastic)),
      fixed: rounds.map((r) => loadByPhase(r.values.fixed))
    },
    loadPByPhaseNote:
      "median of the coordinator's mean load P per active worker (GetExecutionState.pool, polled every 500 ms), " +
      "per round: what --autoscale-high/-low were calibrated against",
    runsWithStateEqualToReference: `${rounds.flatMap((r) => MODES.filter((mode) => r.values[mode].stateMatchesReference === true)).length}/${rounds.length * MODES.length}`,
    runsWithStateEqualToReferenceNote:
      "after each run, once GetExecutionState is complete: its state hash against the sequential reference " +
      "execution of the receipts' order (undefined in fig9Runs: the state never became complete within 30 s)",
    recoveries: rounds.reduce((n, r) => n + MODES.reduce((k, mode) => k + r.values[mode].recoveries, 0), 0),
    conditions,
    paper:
      "Fig. 9 of the paper: 40k -> 60k -> 40k TPS of uniform YCSB; a pre-launched worker joins on the spike and " +
      "serves at once (state fetched on demand), worker 3 retires gracefully on the drop, latency low and stable " +
      "across both transitions",
    ...(ratioNotes.length === 0 ? {} : { fig9RatioNotes: ratioNotes }),
    fig9Runs: rounds.map((r, i) => ({
      round: i + 1,
      busy: r.busy,
      machine: r.machine,
      transitions: perRound[i]!.transitions.map((w) => ({
        ...w,
        fromS: round(w.fromS, 2),
        toS: round(w.toS, 2),
        p90Inflation: round(w.p90Inflation, 3)
      })),
      runs: MODES.map((mode) => {
        const run = r.values[mode]
        const e = run.events
        return {
          mode,
          submitted: run.submitted,
          answered: run.answered,
          byWorker: run.byWorker,
          recoveries: run.recoveries,
          stateMatchesReference: run.stateMatchesReference ?? null,
          scaleOuts: run.scaleOuts,
          scaleIns: run.scaleIns,
          initialActive: e.initialActive,
          ...(mode === "elastic"
            ? {
                spare: e.spare,
                scaleOutDecisionS: roundOr(e.scaleOutDecisionS),
                newWorkerServingS: roundOr(e.newWorkerServingS),
                retireDecisionS: roundOr(e.retireDecisionS),
                retiredWorker: e.retiredWorker ?? null,
                retiredS: roundOr(e.retiredS),
                retiredExitS: roundOr(e.retiredExitS),
                retiredExitCode: e.retiredExitCode ?? null,
                decisions: run.decisions
              }
            : {})
        }
      })
    }))
  }
  return { ratios, metrics, curves: fig9Curves(rounds) }
}

const roundOr = (x: number | undefined) => (x === undefined ? null : round(x, 2))

/** The offered rate as a step line over the profile. */
const offered = (p: Fig9Profile): Array<CurvePoint> => {
  const series = "offered load"
  const edges = [0, spikeStartS(p), spikeEndS(p), profileSeconds(p)]
  return edges.flatMap((t, i) =>
    i === edges.length - 1
      ? [{ series, x: t, y: rateAt(p, t - 1e-9) }]
      : [
          { series, x: t, y: rateAt(p, t) },
          { series, x: edges[i + 1]!, y: rateAt(p, t) }
        ]
  )
}

const ACTIVE = "active workers (right axis)"

const poolPoints = (run: Fig9Run): Array<CurvePoint> =>
  run.pool.map((s) => ({ series: ACTIVE, x: round(s.t, 2), y: s.active }))

const fig9Curves = (rounds: Fig9Rounds): Record<string, Curve> => {
  const elastic = rounds[0]!.values.elastic
  const fixed = rounds[0]!.values.fixed
  const p = elastic.profile
  const where = `${p.baseTps} -> ${p.spikeTps} -> ${p.baseTps} tx/s (real processes, round 1)`
  const y2 = { title: "active workers", series: [ACTIVE], interpolate: "step-after" as const, ticks: [0, 1, 2, 3] }
  const inProfile = <T extends { readonly t: number }>(xs: ReadonlyArray<T>) =>
    xs.filter((x) => x.t < profileSeconds(p) + 5)
  return {
    "fig9-throughput": {
      title: `Fig. 9: throughput as the load rises by half and falls back, ${where}`,
      x: { title: "time since the load began (s)" },
      y: { title: "completed transactions (tx/s, 1.25 s moving mean of 250 ms buckets)" },
      y2,
      points: [
        ...offered(p),
        ...inProfile(smoothed(elastic.timeline)).map((q) => ({
          series: "elastic (--autoscale 2..3)",
          x: q.t,
          y: round(q.tps, 0)
        })),
        ...inProfile(smoothed(fixed.timeline)).map((q) => ({ series: "fixed pool of 3", x: q.t, y: round(q.tps, 0) })),
        ...poolPoints(elastic)
      ],
      pointMarks: false
    },
    "fig9-latency": {
      title: `Fig. 9: p50 and p90 latency as the load rises by half and falls back, ${where}`,
      x: { title: "time since the load began (s)" },
      y: { title: "latency, submission to receipt (ms, 1 s buckets)", zero: false },
      y2,
      points: [
        ...inProfile(elastic.latencyTimeline)
          .filter((q) => q.tps > 0)
          .flatMap((q) => [
            { series: "elastic: p50", x: q.t, y: round(q.p50Ms, 1) },
            { series: "elastic: p90", x: q.t, y: round(q.p90Ms, 1) }
          ]),
        ...inProfile(fixed.latencyTimeline)
          .filter((q) => q.tps > 0)
          .map((q) => ({ series: "fixed pool of 3: p90", x: q.t, y: round(q.p90Ms, 1) })),
        ...poolPoints(elastic)
      ],
      pointMarks: false
    }
  }
}

/** The section as the harness writes it (with the machine over the Fig. 9 part of the run). */
export const fig9Section = (
  quick: boolean,
  command: string,
  machineStart: MachineReading,
  report: ReturnType<typeof fig9Report>
): SectionPart => ({
  info: { command, quick, machine: machineNow(machineStart) },
  ratios: report.ratios,
  metrics: report.metrics,
  curves: report.curves
})

const printFig9 = (report: ReturnType<typeof fig9Report>) => {
  const m = report.metrics
  const row = (name: string, s: { median: number | null; min: number | null; max: number | null }, goal = "") => [
    name,
    s.median,
    `${s.min}–${s.max}`,
    goal
  ]
  printTable(
    "Remora: Fig. 9 (real processes; median and min–max over interleaved rounds)",
    ["name", "median", "min–max", "goal"],
    [
      row("elasticScaleOutSeconds", m.elasticScaleOutSeconds),
      row("elasticScaleInSeconds (spike end to retired)", m.elasticScaleInSeconds),
      row("elasticP90InflationDuringScaling", m.elasticP90InflationDuringScaling, "<= 1.5"),
      row("  fixed pool, same windows", m.fixedPoolP90InflationSameWindows),
      row("stallSeconds (beyond the fixed pool's longest gap)", m.stallSeconds, "0"),
      row("  longest gap, elastic (s)", m.longestGapSeconds.elastic),
      row("  longest gap, fixed pool (s)", m.longestGapSeconds.fixed),
      ...Object.entries(report.ratios).map(([k, v]) => [k, v.median, `${v.min}–${v.max}`, ""])
    ]
  )
}

/** Fig. 9 alone, written as its section of remora.json (the rest of the stored result stays). */
export const runFig9Only = async (quick: boolean): Promise<void> => {
  const started = performance.now()
  const machineStart = readMachine()
  const say = (line: string) => console.log(`  [${((performance.now() - started) / 1000).toFixed(0)} s] ${line}`)
  const report = fig9Report(quick, await runFig9Rounds(quick, say))
  printFig9(report)
  const command = `pnpm bench remora --fig9${quick ? " --quick" : ""}`
  const path = await writeSection("remora", FIG9_SECTION, fig9Section(quick, command, machineStart, report))
  console.log(`\nwrote the ${FIG9_SECTION} section of ${path} and its plots`)
}
