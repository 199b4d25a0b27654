/**
 * Fig. 8 in `pnpm bench remora`: clusters at two or three `--epoch-ms` values run in interleaved rounds (the
 * same seed, so the same kill moments and victims, for every value in a round), and what they give:
 *
 * - `recoveryDipSeconds` and `coordinatorRestartToServingMs` at the default epoch length, median and min–max
 *   over every kill of every round;
 * - the epoch-length trade-off (issue 21 item 1): per `--epoch-ms`, the dip, the replay set a worker's recovery
 *   dispatched, the coordinator's restart, and the coordinator's CPU per transaction while nothing fails (the
 *   snapshot work); the ratios of the longest epoch over the default from the rounds;
 * - the plots: throughput and p90 over time of the first round at the default epoch, every kill marked, and the
 *   trade-off.
 */
import {
  type Curve,
  interleave,
  type MachineReading,
  machineNow,
  type Ratio,
  type Round,
  ratioOf,
  type SectionPart,
  spreadOf
} from "../harness/index.js"
import { round } from "../report.js"
import { type Fig8Run, runFig8, smoothed } from "./fig8.js"

/**
 * Fig. 8 is a section of remora.json (harness/section.ts): its ratios are named `fig8…`, its curves `fig8-…`, its
 * metrics are `metrics.fig8`; `pnpm bench remora --fig8 [--quick]` measures and rewrites it alone.
 */
export const FIG8_SECTION = "fig8"

/** The coordinator's default `--epoch-ms` (services/cli/src/roles/coordinator.ts): the headline's operating point. */
export const DEFAULT_EPOCH_MS = 1_000

export const fig8EpochsMs = (quick: boolean): ReadonlyArray<number> =>
  quick ? [DEFAULT_EPOCH_MS, 8_000] : [250, DEFAULT_EPOCH_MS, 8_000]

const keyOf = (epochMs: number) => `epoch${epochMs}`

export type Fig8Rounds = ReadonlyArray<Round<Record<string, Fig8Run>>>

export const runFig8Rounds = async (quick: boolean, say: (line: string) => void): Promise<Fig8Rounds> =>
  interleave(
    { quick, label: "remora Fig. 8" },
    Object.fromEntries(
      fig8EpochsMs(quick).map((epochMs) => [
        keyOf(epochMs),
        async (r: number) => {
          say(
            `Fig. 8 (processes), round ${r + 1}, --epoch-ms ${epochMs}: constant YCSB load, kill -9 of workers, then of the coordinator`
          )
          const run = await runFig8({
            quick,
            seed: 80 + r,
            epochMs,
            workerKills: quick ? 2 : 3,
            coordinatorKills: quick ? 1 : 2
          })
          say(
            `  dips ${run.workerKills.map((k) => `${k.dipSeconds} s (${k.worker}, replayed ${k.replayed})`).join(", ")}; ` +
              `coordinator restart to serving ${run.coordinatorKills.map((k) => `${k.restartToServingMs} ms`).join(", ")}`
          )
          return run
        }
      ])
    ) as Record<string, (r: number) => Promise<Fig8Run>>
  )

const finite = (xs: ReadonlyArray<number>) => xs.filter((x) => Number.isFinite(x))

const spread = (values: ReadonlyArray<number>) => {
  const kept = finite(values)
  if (kept.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, values, samples: 0 }
  const s = spreadOf(kept)
  return { median: round(s.median, 3), min: round(s.min, 3), max: round(s.max, 3), values, samples: kept.length }
}

const median = (xs: ReadonlyArray<number>) => spreadOf(finite(xs)).median

const runsAt = (rounds: Fig8Rounds, epochMs: number) => rounds.map((r) => r.values[keyOf(epochMs)]!)

export const fig8Report = (quick: boolean, rounds: Fig8Rounds) => {
  const epochs = fig8EpochsMs(quick)
  const longest = Math.max(...epochs)
  const dips = (epochMs: number) => runsAt(rounds, epochMs).flatMap((r) => r.workerKills.map((k) => k.dipSeconds))
  const restarts = (epochMs: number) =>
    runsAt(rounds, epochMs).flatMap((r) => r.coordinatorKills.map((k) => k.restartToServingMs))
  const byEpoch = Object.fromEntries(
    epochs.map((epochMs) => {
      const runs = runsAt(rounds, epochMs)
      return [
        String(epochMs),
        {
          recoveryDipSeconds: spread(dips(epochMs)),
          preFailureBelowHalfSeconds: spread(
            runs.flatMap((r) => r.workerKills.map((k) => k.preFailureBelowHalfSeconds))
          ),
          workerRecoveryReplayedTxs: spread(runs.flatMap((r) => r.workerKills.map((k) => k.replayed))),
          killToRecoveryStartMs: spread(runs.flatMap((r) => r.workerKills.map((k) => k.killToRecoveryMs))),
          coordinatorRestartToServingMs: spread(restarts(epochMs)),
          coordinatorReplayedBlocks: spread(runs.flatMap((r) => r.coordinatorKills.map((k) => k.replayedBlocks))),
          coordinatorKillToReceiptMs: spread(runs.flatMap((r) => r.coordinatorKills.map((k) => k.killToReceiptMs))),
          coordinatorCpuUsPerTxSteady: spread(runs.map((r) => round(r.coordinatorCpuUsPerTx, 1))),
          workerKills: runs.reduce((n, r) => n + r.workerKills.length, 0),
          unrecoveredWorkerKills: runs.reduce((n, r) => n + r.workerKills.filter((k) => !k.recovered).length, 0),
          workerKillsNotSteadyBefore: runs.reduce((n, r) => n + r.workerKills.filter((k) => !k.steadyBefore).length, 0),
          coordinatorKillsNotServingByDeadline: runs.reduce(
            (n, r) => n + r.coordinatorKills.filter((k) => !Number.isFinite(k.restartToServingMs)).length,
            0
          ),
          recoveries: runs.reduce((n, r) => n + r.recoveries, 0),
          unprovokedRecoveries: runs.reduce((n, r) => n + r.unprovokedRecoveries, 0)
        }
      ]
    })
  )

  // Ratios of the longest epoch over the default, per round (each side: the median of that round's kills).
  const conditions = {
    figure: "Fig. 8",
    processes: "reef run coordinator (--data-dir, window consensus 100 ms) + 3 reef run workers + nats-server",
    load: `constant YCSB (2 objects, zipf 0.6, 10k keys), ${runsAt(rounds, DEFAULT_EPOCH_MS)[0]?.rateTps ?? "?"} tx/s from one gRPC client`,
    faults: "the same seed per round on both sides: the same kill moments and victims",
    machine: "shared with other sessions; load recorded per round"
  }
  const ratios: Record<string, Ratio> = {}
  const perRound = (f: (r: Fig8Run) => number, epochMs: number) => (v: Record<string, Fig8Run>) => f(v[keyOf(epochMs)]!)
  const dipOf = (r: Fig8Run) => median(r.workerKills.map((k) => k.dipSeconds))
  const restartOf = (r: Fig8Run) => median(r.coordinatorKills.map((k) => k.restartToServingMs))
  const candidates: Array<[string, string, (r: Fig8Run) => number]> = [
    ["recoveryDip", "worker kill -9: seconds below half the pre-failure throughput", dipOf],
    ["coordinatorRestartToServing", "coordinator kill -9: ms from the restart to its first new receipt", restartOf]
  ]
  const ratioNotes: Array<string> = []
  for (const [name, what, f] of candidates) {
    const ratioName = `${FIG8_SECTION}${name[0]!.toUpperCase()}${name.slice(1)}Epoch${longest}OverEpoch${DEFAULT_EPOCH_MS}Ms`
    const den = rounds.map((r) => f(r.values[keyOf(DEFAULT_EPOCH_MS)]!))
    const num = rounds.map((r) => f(r.values[keyOf(longest)]!))
    if (den.some((d) => !(d > 0)) || num.some((n) => !Number.isFinite(n))) {
      ratioNotes.push(`${ratioName}: not reported, a round's value was 0 or missing (num ${num}, den ${den})`)
      continue
    }
    ratios[ratioName] = ratioOf(
      {
        numerator: `${what}, --epoch-ms ${longest} (median of the round's kills)`,
        denominator: `the same, --epoch-ms ${DEFAULT_EPOCH_MS} (the default)`,
        conditions
      },
      rounds,
      perRound(f, longest),
      perRound(f, DEFAULT_EPOCH_MS)
    )
  }

  const headlineDips = spread(dips(DEFAULT_EPOCH_MS))
  const headlineRestarts = spread(restarts(DEFAULT_EPOCH_MS))
  const metrics = {
    recoveryDipSeconds: { ...headlineDips, epochMs: DEFAULT_EPOCH_MS },
    recoveryDipSecondsDefinition:
      "Fig. 8 on real processes: a reef run coordinator (--data-dir, window consensus 100 ms, --epoch-ms 1000, the " +
      "default) and 3 reef run workers over a nats-server; constant YCSB load from one gRPC client; a random worker " +
      "killed with SIGKILL at a random moment and restarted at once with the same id (a supervisor's restart: the " +
      "coordinator sees a new incarnation, fences, rolls every worker back to the persisted epoch and replays); " +
      "seconds after the kill with completions (250 ms buckets, read as a 1.25 s centred moving mean) below half the median of " +
      "the 5 s before it (the paper: about 2 s); the same read over those 5 s is the noise floor " +
      "(fig8ByEpochMs.*.preFailureBelowHalfSeconds). Median and min–max over every kill of every interleaved round; the restarted " +
      "process's start-up (node, NATS, joining) is part of the dip.",
    coordinatorRestartToServingMs: { ...headlineRestarts, epochMs: DEFAULT_EPOCH_MS },
    coordinatorRestartToServingMsDefinition:
      "the same cluster: the coordinator killed with SIGKILL and restarted at once on its --data-dir; ms from " +
      "spawning the new process to the receipt of a new transaction submitted by a fresh gRPC client (probes every " +
      "20 ms, each a new client, so no reconnect back-off counts): process start, LMDB restore, fencing and the " +
      "replay of the blocks after the last snapshot. Median and min–max over every coordinator kill of every round.",
    fig8ByEpochMs: byEpoch,
    fig8ByEpochMsNote:
      "the epoch-length trade-off (issue 21 item 1): a longer --epoch-ms means fewer snapshots (coordinator CPU per " +
      "transaction while nothing fails, measured over the steady stretch before the first kill) and a longer replay " +
      "set at a recovery (workerRecoveryReplayedTxs, coordinatorReplayedBlocks). unrecoveredWorkerKills: kills " +
      "after which throughput was not back above half by the end of the window (their dip is the whole window, a " +
      "lower bound); workerKillsNotSteadyBefore: kills that found throughput outside half to 1.5 times the offered rate (still down " +
      "from an earlier fault, or catching up), whose dip is not read (NaN in the values); coordinatorKillsNotServingByDeadline: restarts with no new receipt within 60 s (quick) or " +
      "120 s (NaN in the values); unprovokedRecoveries: recoveries no kill explains (a live worker taken for gone, " +
      "or the stall backstop: /work/coord/remora-findings.md F1, F2)",
    ...(ratioNotes.length === 0 ? {} : { fig8RatioNotes: ratioNotes }),
    fig8Runs: rounds.map((r, i) => ({
      round: i + 1,
      busy: r.busy,
      machine: r.machine,
      runs: Object.values(r.values).map((run) => ({
        epochMs: run.epochMs,
        rateTps: run.rateTps,
        transactions: run.transactions,
        recoveries: run.recoveries,
        unprovokedRecoveries: run.unprovokedRecoveries,
        workerKills: run.workerKills.map((k) => ({
          ...k,
          atS: round(k.atS, 2),
          preFailureTps: round(k.preFailureTps, 0)
        })),
        coordinatorKills: run.coordinatorKills.map((k) => ({ ...k, atS: round(k.atS, 2) }))
      }))
    }))
  }
  return { ratios, metrics, curves: fig8Curves(rounds, epochs) }
}

/** Vertical marks (a series of two points each) at every kill of `run`, from `lo` to `hi` on y. */
const killMarks = (run: Fig8Run, lo: number, hi: number) => [
  ...run.workerKills.flatMap((k) => {
    const series = `kill -9 ${k.worker} at ${round(k.atS, 1)} s`
    return [
      { series, x: round(k.atS, 2), y: lo },
      { series, x: round(k.atS, 2), y: hi }
    ]
  }),
  ...run.coordinatorKills.flatMap((k) => {
    const series = `kill -9 coordinator at ${round(k.atS, 1)} s`
    return [
      { series, x: round(k.atS, 2), y: lo },
      { series, x: round(k.atS, 2), y: hi }
    ]
  })
]

const fig8Curves = (rounds: Fig8Rounds, epochs: ReadonlyArray<number>): Record<string, Curve> => {
  const run = rounds[0]!.values[keyOf(DEFAULT_EPOCH_MS)]!
  const maxTps = Math.max(...run.timeline.map((p) => p.tps))
  const p90s = run.timeline.filter((p) => p.p90Ms > 0).map((p) => p.p90Ms)
  const where = `--epoch-ms ${DEFAULT_EPOCH_MS}, ${run.rateTps} tx/s offered (real processes, round 1)`
  const seconds = (xs: ReadonlyArray<number>) => xs.map((x) => x / 1000)
  const band = (xs: ReadonlyArray<number>) => {
    const s = spread(xs)
    return { y: s.median, yMin: s.min, yMax: s.max }
  }
  return {
    "fig8-throughput": {
      title: `Fig. 8: throughput under worker and coordinator kills, ${where}`,
      x: { title: "time since the load began (s)" },
      y: { title: "completed transactions (tx/s, 250 ms buckets)" },
      points: [
        ...run.timeline.map((p) => ({ series: "throughput, 250 ms buckets", x: p.t, y: p.tps })),
        ...smoothed(run.timeline).map((p) => ({
          series: "throughput, 1.25 s moving mean",
          x: p.t,
          y: round(p.tps, 0)
        })),
        ...killMarks(run, 0, maxTps)
      ],
      pointMarks: false
    },
    "fig8-p90": {
      title: `Fig. 8: p90 latency under worker and coordinator kills, ${where}`,
      x: { title: "time since the load began (s)" },
      y: { title: "p90 latency, submission to receipt (ms)", scale: "log", zero: false },
      points: [
        ...run.timeline.filter((p) => p.p90Ms > 0).map((p) => ({ series: "p90 latency", x: p.t, y: p.p90Ms })),
        ...killMarks(run, Math.min(...p90s), Math.max(...p90s))
      ],
      pointMarks: false
    },
    "fig8-epochs": {
      title: `Epoch length vs recovery (real processes), median and min–max over ${rounds.length} rounds' kills`,
      x: { title: "--epoch-ms", labels: epochs.map((e) => `${e} ms`) },
      y: { title: "seconds" },
      points: epochs.flatMap((epochMs, i) => {
        const runs = runsAt(rounds, epochMs)
        return [
          {
            series: "worker kill: dip",
            x: i,
            ...band(runs.flatMap((r) => r.workerKills.map((k) => k.dipSeconds)))
          },
          {
            series: "coordinator restart to serving",
            x: i,
            ...band(seconds(runs.flatMap((r) => r.coordinatorKills.map((k) => k.restartToServingMs))))
          }
        ]
      })
    }
  }
}

/** The section as the harness writes it (with the machine over the Fig. 8 part of the run). */
export const fig8Section = (
  quick: boolean,
  command: string,
  machineStart: MachineReading,
  report: ReturnType<typeof fig8Report>
): SectionPart => ({
  info: { command, quick, machine: machineNow(machineStart) },
  ratios: report.ratios,
  metrics: report.metrics,
  curves: report.curves
})
