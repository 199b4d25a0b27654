/**
 * `pnpm bench remora [--quick] [--real]`: the Remora paper's evaluation (§6: Figs. 4-8, 11, 12) in one run.
 *
 * - Fig. 11 (the coordinator's rate) and RSS run on real processes: a nats-server, a coordinator host and 8 worker
 *   hosts (remora/host.ts), each configuration a fresh cluster with a real coordinator (mempool, window
 *   consensus, core, batched tells over NATS) and real workers (Ed25519 checks, contracts, virtual cores) at
 *   normal priority. A burst counts transactions executed and answered, per CPU-second of the coordinator process
 *   from the first admission to the last receipt; the policies run in interleaved rounds (measured ratios).
 * - Figs. 4-7 (scheduling, separation, latency, architecture) run on the seeded simulator by default: the real
 *   coordinator and worker cores in this process, in virtual time, with the paper's service times on 16 virtual
 *   cores per worker and a modelled network, repeated over seeds. Their ratios are simulated: named `…Sim`, in
 *   the result's `simulated` section, each at a stated point (one per object count, never the best of them).
 *   `--real` runs them on the real processes instead, in rounds (`…Processes`, measured); on a machine shared
 *   with other sessions their run-queue waits dominate those numbers.
 * - Fig. 12 (version assignment and SFS alone) runs the pure cores in this process, per CPU-second.
 * - Fig. 8 (workers killed under constant load, then the coordinator) runs on `reef run` processes with a
 *   data directory (remora/fig8.ts), at two or three `--epoch-ms` values in interleaved rounds
 *   (remora/fig8-report.ts): throughput and p90 over time, `recoveryDipSeconds`,
 *   `coordinatorRestartToServingMs`, and the epoch-length trade-off, as the section `fig8` of remora.json;
 *   `pnpm bench remora --fig8 [--quick]` measures and rewrites that section alone.
 * - Fig. 9 (the worker pool following a load that rises by half and falls back, against a fixed pool) is the
 *   section `fig9`, measured only by `pnpm bench remora --fig9 [--quick]` (remora/fig9-report.ts).
 * - Fig. 10 (placement following a moving hotspot: SFS, round-robin, locality-only on real processes) is the
 *   section `fig10`, measured only by `pnpm bench remora --fig10 [--quick]` (remora/fig10-report.ts).
 * - The fault-free configurations run with failure detection relaxed (remora/kernel-scope.ts): on a shared
 *   machine a starved process would otherwise be taken for a dead one (/work/coord/remora-findings.md).
 */
import { startNatsServer } from "@reef/kernel"
import type { PolicyName, Separation } from "@reef/remora"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import {
  type Curve,
  figureOf,
  interleave,
  machineNow,
  type Round,
  ratioOf,
  readMachine,
  roundsFor,
  simRatioOf,
  writeResult,
  writeSection
} from "./harness/index.js"
import { realBackend, simBackend } from "./remora/backends.js"
import { coreSweep } from "./remora/core-bench.js"
import { driverSweep } from "./remora/driver-bench.js"
import type { ExperimentResult } from "./remora/experiment.js"
import { FIG8_SECTION, fig8Report, fig8Section, runFig8Rounds } from "./remora/fig8-report.js"
import { runFig9Only } from "./remora/fig9-report.js"
import { runFig10Only } from "./remora/fig10-report.js"
import { FIG5_POLICIES, type FigureData, type FigureSettings, runFigures, SEPARATIONS } from "./remora/figures.js"
import { type Hosts, runConfiguration, startHosts } from "./remora/hosts.js"
import { printTable, round } from "./report.js"

const WORKERS = 8

const DISPATCH_POLICIES = (quick: boolean): ReadonlyArray<{ policy: PolicyName; separation: Separation }> =>
  quick
    ? [
        { policy: "round-robin", separation: "none" },
        { policy: "sfs", separation: "coordinator" }
      ]
    : [
        { policy: "round-robin", separation: "none" },
        { policy: "random", separation: "none" },
        { policy: "hermes-nr", separation: "none" },
        { policy: "sfs", separation: "none" },
        { policy: "sfs", separation: "coordinator" }
      ]

const figureSettings = (quick: boolean): FigureSettings => ({
  // --quick: the two policies its ratios compare; a full run draws all five.
  ...(quick ? { policies: ["round-robin", "sfs"] as const } : {}),
  objects: quick ? [2, 5] : [2, 3, 5],
  zipfs: quick ? [0.9] : [0.8, 0.9],
  workerCounts: quick ? [1, 8] : [1, 2, 3, 4, 6, 8],
  workers: WORKERS
})

/**
 * The ratios Figs. 4-7 give, each at a stated point (no best over object counts: one ratio per count). Named
 * without a backend; the suite adds `Sim` (simulator seeds) or `Processes` (--real rounds).
 */
const figureRatioSpecs = (s: FigureSettings) => {
  type Spec = {
    spec: { numerator: string; denominator: string; conditions: Record<string, string | number> }
    numerator: (d: FigureData) => number
    denominator: (d: FigureData) => number
  }
  const tps = (d: FigureData, zipf: number, objects: number, policy: PolicyName) =>
    d.policies.find((p) => p.zipf === zipf && p.objects === objects && p.policy === policy)?.tps ?? Number.NaN
  const sep = (d: FigureData, ratio: number, mode: Separation) =>
    d.separation.find((x) => x.ratio === ratio && x.mode === mode)?.tps ?? Number.NaN
  const lat = (d: FigureData, config: string) => d.latency.find((l) => l.config === config)!
  const largest = Math.max(...s.workerCounts)
  const out: Record<string, Spec> = {}
  for (const objects of s.objects) {
    out[`sfsOverRoundRobinZipf09O${objects}`] = {
      spec: {
        numerator: `SFS throughput, YCSB zipf 0.9, ${objects} objects per tx (tx/s)`,
        denominator: `round-robin throughput, the same workload (tx/s)`,
        conditions: { figure: "Fig. 5", separation: "none", scheduling: "post-consensus", workers: s.workers }
      },
      numerator: (d) => tps(d, 0.9, objects, "sfs"),
      denominator: (d) => tps(d, 0.9, objects, "round-robin")
    }
  }
  for (const [name, ratio, mode] of [
    ["coordinatorSeparationSpeedup4to1", 4, "coordinator"],
    ["workerSeparationSpeedup4to1", 4, "worker"],
    ["coordinatorSeparationSpeedup1to1", 1, "coordinator"]
  ] as const) {
    out[name] = {
      spec: {
        numerator: `SFS with ${mode}-based separation, stateless:stateful ${ratio}:1 (tx/s)`,
        denominator: `SFS without separation, ${ratio}:1 (tx/s)`,
        conditions: { figure: "Fig. 6", workload: "YCSB 3 objects zipf 0.9", workers: s.workers }
      },
      numerator: (d) => sep(d, ratio, mode),
      denominator: (d) => sep(d, ratio, "none")
    }
  }
  for (const q of ["p50", "p90"] as const) {
    out[`preConsensusLatencySavedOverStatelessTime${q === "p90" ? "P90" : ""}`] = {
      spec: {
        numerator: `${q} latency saved by stateless work and scheduling before consensus (Post-Sep + Post-Sched minus Pre-Sep + Pre-Sched, ms)`,
        denominator: "the stateless part's service time (ms)",
        conditions: { figure: "Fig. 7", workload: "uniform YCSB 2 objects", load: "30% of capacity", windowMs: 300 }
      },
      numerator: (d) => lat(d, "Post-Sep + Post-Sched")[q] - lat(d, "Pre-Sep + Pre-Sched")[q],
      denominator: (d) => d.latencyStatelessMs
    }
  }
  out.asymmetricOverSymmetricPerNode = {
    spec: {
      numerator: `Remora (asymmetric) throughput per node, ${largest} workers (tx/s)`,
      denominator: `SymArch throughput per node, ${largest} workers (tx/s)`,
      conditions: {
        figure: "Fig. 4",
        workload: "uniform YCSB",
        policy: "round-robin",
        operatingPoint: `${largest} workers`
      }
    },
    numerator: (d) => d.architecture.find((a) => a.workers === largest)!.asymmetric,
    denominator: (d) => d.architecture.find((a) => a.workers === largest)!.symmetric
  }
  return out
}

export const GOALS: Readonly<Record<string, number>> = {
  sfsOverRoundRobinZipf09: 1.25,
  coordinatorSeparationSpeedup4to1: 2.5,
  preConsensusLatencySavedOverStatelessTime: 0.9,
  asymmetricOverSymmetricPerNode: 1.2,
  coordinatorDispatchTps: 100_000
}

/** Fig. 8 alone, written as its section of remora.json (the rest of the stored result stays). */
const runFig8Only = async (quick: boolean): Promise<void> => {
  const started = performance.now()
  const machineStart = readMachine()
  const say = (line: string) => console.log(`  [${((performance.now() - started) / 1000).toFixed(0)} s] ${line}`)
  const report = fig8Report(quick, await runFig8Rounds(quick, say))
  printFig8(report)
  const command = `pnpm bench remora --fig8${quick ? " --quick" : ""}`
  const path = await writeSection("remora", FIG8_SECTION, fig8Section(quick, command, machineStart, report))
  console.log(`\nwrote the ${FIG8_SECTION} section of ${path} and its plots`)
}

const printFig8 = (report: ReturnType<typeof fig8Report>) => {
  const m = report.metrics
  printTable(
    "Remora: Fig. 8 (real processes; median and min–max over every kill of every round)",
    ["name", "median", "min–max", "samples"],
    [
      [
        `recoveryDipSeconds (--epoch-ms ${m.recoveryDipSeconds.epochMs}; paper: about 2)`,
        m.recoveryDipSeconds.median,
        `${m.recoveryDipSeconds.min}–${m.recoveryDipSeconds.max}`,
        m.recoveryDipSeconds.samples
      ],
      [
        `coordinatorRestartToServingMs (--epoch-ms ${m.coordinatorRestartToServingMs.epochMs})`,
        m.coordinatorRestartToServingMs.median,
        `${m.coordinatorRestartToServingMs.min}–${m.coordinatorRestartToServingMs.max}`,
        m.coordinatorRestartToServingMs.samples
      ],
      ...Object.entries(report.ratios).map(([k, v]) => [k, v.median, `${v.min}–${v.max}`, v.repeats])
    ]
  )
}

export const run = async (quick: boolean, flags: ReadonlyArray<string> = []): Promise<void> => {
  if (flags.includes("--fig8")) return runFig8Only(quick)
  if (flags.includes("--fig9")) return runFig9Only(quick)
  if (flags.includes("--fig10")) return runFig10Only(quick)
  const real = flags.includes("--real")
  const scope = Effect.runSync(Scope.make())
  let hosts: Hosts | undefined
  const cleanUp = async () => {
    if (hosts !== undefined) await Promise.all([hosts.coordinator, ...hosts.workers].map((h) => h.close()))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`bench remora: ${signal}, stopping what it started`)
    void cleanUp().finally(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  const started = performance.now()
  const machineStart = readMachine()
  const say = (line: string) => console.log(`  [${((performance.now() - started) / 1000).toFixed(0)} s] ${line}`)
  const rows: Array<ReadonlyArray<unknown>> = []
  try {
    const nats = await Effect.runPromise(Scope.extend(startNatsServer({ jetstream: false }), scope))
    hosts = await startHosts(nats.url, WORKERS)
    const h = hosts

    // RSS of a worker actor that joined its cluster and has done nothing yet.
    await Promise.all(
      h.workers.map((w, i) => w.send({ op: "start", cluster: "remora-idle", id: `w${i + 1}`, cores: 2 }))
    )
    await new Promise((r) => setTimeout(r, 2000))
    const idleWorkers = await Promise.all(h.workers.map((w) => w.memory()))
    await Promise.all(h.workers.map((w) => w.send({ op: "stop" })))
    const idleCoordinatorHost = await h.coordinator.memory()

    // Fig. 12: the serial modules alone.
    const modules = coreSweep(quick)
    say(`Fig. 12: ${modules.length} points`)

    // Fig. 11: zero service time, uniform YCSB, a burst per policy, the policies in interleaved rounds (no best-of).
    // Workers at normal priority; a burst counts only transactions executed and answered, and the coordinator's
    // CPU from the first admission to the last receipt.
    const burstTxs = quick ? 10_000 : 30_000
    const dispatchExperiment = (d: { policy: PolicyName; separation: Separation }) => ({
      params: { policy: d.policy, separation: d.separation },
      windowMs: 1,
      blockIntervalMs: 20,
      maxBlockTxs: 2000,
      workload: { keys: 10_000_000, objectsPerTx: 2, zipf: 0, statelessCostUs: 0, statefulCostUs: 0 },
      load: { kind: "burst" as const, txs: burstTxs }
    })
    // A burst that warms the coordinator host's JIT up first.
    await runConfiguration(h, WORKERS, 2, dispatchExperiment({ policy: "round-robin", separation: "none" }))
    const policyKey = (d: { policy: PolicyName; separation: Separation }) => `${d.policy}/${d.separation}`
    const dispatchRounds = await interleave(
      { quick, label: "remora dispatch" },
      Object.fromEntries(
        DISPATCH_POLICIES(quick).map((d) => [
          policyKey(d),
          () => runConfiguration(h, WORKERS, 2, dispatchExperiment(d))
        ])
      ) as Record<string, () => Promise<ExperimentResult>>
    )
    const dispatchFig = (key: string, f: (r: ExperimentResult) => number) =>
      figureOf(dispatchRounds, (v) => f(v[key] as ExperimentResult))
    for (const d of DISPATCH_POLICIES(quick)) {
      const tps = dispatchFig(policyKey(d), (r) => r.dispatchTps)
      rows.push(["Fig. 11 (processes)", `${d.policy}, separation ${d.separation}`, "", tps.median, "", "", ""])
      say(`Fig. 11 ${policyKey(d)}: ${tps.median} completed tx per coordinator CPU-second (${tps.min}–${tps.max})`)
    }
    // The same path without the network (driver and encoding in this process).
    const inProcess = driverSweep(DISPATCH_POLICIES(quick), burstTxs, 2)
    for (const p of inProcess) {
      rows.push([
        "Fig. 11 (in-process, no NATS)",
        `${p.policy}, separation ${p.separation}`,
        "",
        p.dispatchTps,
        "",
        "",
        ""
      ])
    }
    const roundRobinCpuUsPerTx = dispatchFig("round-robin/none", (r) => r.cpuUsPerTx).median

    // Figs. 5, 6, 7, 4: on the simulator over several seeds (the default), or on the processes in rounds (--real).
    const s = figureSettings(quick)
    const seeds = Array.from({ length: roundsFor(quick) }, (_, i) => i + 1)
    const runOn = (backend: ReturnType<typeof simBackend>, tag: string) =>
      runFigures(backend, s, roundRobinCpuUsPerTx, (c, m) => {
        rows.push([`${c.figure} (${tag})`, c.name, m.throughput, "", m.p50Ms, m.p90Ms, m.leaseTransfersPerTx])
        say(
          `${c.figure} ${c.name} (${tag}): ${m.throughput} tx/s` +
            (c.load.kind === "rate" ? `, p50 ${m.p50Ms} ms, p90 ${m.p90Ms} ms` : "")
        )
      })
    const figureRuns: Array<FigureData> = []
    let realRounds: ReadonlyArray<Round<{ figures: FigureData }>> | undefined
    if (real) {
      realRounds = await interleave(
        { quick, label: "remora figures (processes)" },
        { figures: (r) => runOn(realBackend(h, quick), `processes, round ${r + 1}`) }
      )
      figureRuns.push(...realRounds.map((r) => r.values.figures))
    } else {
      for (const seed of seeds) figureRuns.push(await runOn(simBackend(quick, 16, seed), `simulator, seed ${seed}`))
    }
    const backend = real ? realBackend(h, quick) : simBackend(quick)

    const peaks = {
      coordinatorHost: await h.coordinator.memory(),
      workers: await Promise.all(h.workers.map((w) => w.memory()))
    }

    // Fig. 8: workers killed under constant load, then the coordinator, on real processes, at two or three
    // --epoch-ms values in interleaved rounds (remora/fig8-report.ts).
    const fig8Start = readMachine()
    const fig8 = fig8Report(quick, await runFig8Rounds(quick, say))

    // ---- ratios ------------------------------------------------------------------------------------------
    const figureRatios = figureRatioSpecs(s)
    const simulatedRatios = real
      ? {}
      : Object.fromEntries(
          Object.entries(figureRatios).map(([name, r]) => [
            `${name}Sim`,
            simRatioOf(
              r.spec,
              figureRuns.map((d, i) => ({ seed: seeds[i]!, numerator: r.numerator(d), denominator: r.denominator(d) }))
            )
          ])
        )
    const measuredFigureRatios =
      realRounds === undefined
        ? {}
        : Object.fromEntries(
            Object.entries(figureRatios).map(([name, r]) => [
              `${name}Processes`,
              ratioOf(
                r.spec,
                realRounds!,
                (v) => r.numerator(v.figures),
                (v) => r.denominator(v.figures)
              )
            ])
          )
    const ratios = {
      ...measuredFigureRatios,
      ...fig8.ratios,
      coordinatorDispatchOverRoundRobin: ratioOf(
        {
          numerator:
            "Remora's path (SFS, coordinator-based separation): completed tx per coordinator CPU-second, admission included",
          denominator: "round-robin, no separation: completed tx per coordinator CPU-second, admission included",
          conditions: {
            workload: "uniform YCSB, 2 objects, zero service time",
            burst: `${burstTxs} transactions admitted at once, timed to the last receipt`,
            workers: `${WORKERS} worker processes at normal priority, 2 virtual cores each`,
            warmUp: "one round-robin burst before the first round",
            failureDetection:
              "fault-free run: stall backstop off, a worker taken for gone after 60 s of silence (remora/kernel-scope.ts)"
          }
        },
        dispatchRounds,
        (v) => (v["sfs/coordinator"] as ExperimentResult).dispatchTps,
        (v) => (v["round-robin/none"] as ExperimentResult).dispatchTps
      )
    }
    const seriesFig = (f: (d: FigureData) => number) => {
      const xs = figureRuns.map(f).sort((a, b) => a - b)
      const mid = xs.length >> 1
      return {
        y: round(xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2, 1),
        yMin: round(xs[0]!, 1),
        yMax: round(xs[xs.length - 1]!, 1)
      }
    }
    const repeatsNote = real ? `${figureRuns.length} rounds on processes` : `${figureRuns.length} simulator seeds`
    const simTag = real ? "" : "Sim"
    const figuresSection = {
      [`policies${simTag}`]: {
        note: "Fig. 5: no separation, post-consensus scheduling; tps and lease transfers per tx, per repeat",
        runs: figureRuns.map((d) => d.policies)
      },
      [`separation${simTag}`]: {
        note: "Fig. 6: SFS, YCSB 3 objects zipf 0.9",
        runs: figureRuns.map((d) => d.separation)
      },
      [`latency${simTag}`]: {
        note: `Fig. 7: uniform YCSB 2 objects, ${figureRuns[0]!.latencyStatelessMs} ms stateless, SFS, 300 ms window, 30% of capacity`,
        runs: figureRuns.map((d) => d.latency)
      },
      [`architecture${simTag}`]: {
        note:
          "Fig. 4: uniform YCSB, round-robin, no separation; per node = throughput / (workers + 1) asymmetric, " +
          "/ workers SymArch, whose workers spend symmetricSchedulingCostUs per transaction of every block on a " +
          "virtual core (the coordinator's measured CPU per transaction, round-robin, x timeScale)",
        symmetricSchedulingCostUs: figureRuns[0]!.symmetricSchedulingCostUs,
        runs: figureRuns.map((d) => d.architecture)
      }
    }
    const metrics = {
      coordinatorDispatchTps: dispatchFig("sfs/coordinator", (r) => r.dispatchTps),
      coordinatorDispatchTpsDefinition:
        "SFS with coordinator-based separation (Remora's full path), zero service time, uniform YCSB 2 objects, " +
        `${burstTxs} transactions admitted at once, timed until every one has executed and its receipt is back; ` +
        "completed transactions per CPU-second of the coordinator process from the first admission to the last " +
        `receipt (admission, stateless tasks, planning, version assignment, batched tells over NATS to ${WORKERS} ` +
        "worker processes at normal priority, receipts); median and min–max over interleaved rounds, no best-of",
      dispatch: Object.fromEntries(
        DISPATCH_POLICIES(quick).map((d) => [
          policyKey(d),
          {
            dispatchTps: dispatchFig(policyKey(d), (r) => r.dispatchTps),
            wallCompletedTps: dispatchFig(policyKey(d), (r) => r.wallDispatchTps),
            admissionTps: dispatchFig(policyKey(d), (r) => r.admissionTps),
            coordinatorCpuUsPerTx: dispatchFig(policyKey(d), (r) => r.cpuUsPerTx),
            refusedPerRound: dispatchRounds.map((r) => (r.values[policyKey(d)] as ExperimentResult).refused ?? 0)
          }
        ])
      ),
      dispatchInProcess: {
        note:
          "the same bursts through the coordinator's driver in the benchmark process, tasks encoded but not " +
          "published (us per tx: admission, proposal = stateless dispatch + planning, commit = version assignment + dispatch); one run",
        points: inProcess
      },
      modules: { backend: "pure cores in the benchmark process, tx per CPU-second, one run", points: modules },
      ...(real
        ? {
            figures: {
              backend: {
                name: backend.name,
                timeScale: backend.timeScale,
                workers: WORKERS,
                coresPerWorker: backend.coresPerWorker
              },
              repeats: repeatsNote,
              ...figuresSection
            }
          }
        : {}),
      rss: {
        idleWorkerMb: Math.max(...idleWorkers.map((m) => m.rssMb)),
        idleCoordinatorHostMb: idleCoordinatorHost.rssMb,
        peakWorkerMb: Math.max(...peaks.workers.map((m) => m.peakRssMb)),
        peakCoordinatorHostMb: peaks.coordinatorHost.peakRssMb,
        note: "hosts live the whole run (one actor per configuration); the coordinator host also holds the signed workload"
      },
      seconds: round((performance.now() - started) / 1000, 1)
    }

    // ---- curves --------------------------------------------------------------------------------------------
    const tag = real ? "processes" : "simulator"
    const suffix = real ? "" : "-sim"
    const curves: Record<string, Curve> = {}
    Object.assign(curves, fig8.curves)
    for (const zipf of s.zipfs) {
      curves[`policies-zipf${String(zipf).replace(".", "")}${suffix}`] = {
        title: `Fig. 5 (${tag}): scheduling policies, YCSB zipf ${zipf}, median and min–max of ${repeatsNote}`,
        x: { title: "objects per transaction", ticks: s.objects },
        y: { title: "throughput (tx/s)" },
        points: (s.policies ?? FIG5_POLICIES).flatMap((p) =>
          s.objects.map((o) => ({
            series: p,
            x: o,
            ...seriesFig((d) => d.policies.find((x) => x.zipf === zipf && x.objects === o && x.policy === p)?.tps ?? 0)
          }))
        )
      }
    }
    curves[`separation${suffix}`] = {
      title: `Fig. 6 (${tag}): stateless-stateful separation (SFS), ${repeatsNote}`,
      x: { title: "stateless : stateful work (x : 1)", ticks: [1, 4] },
      y: { title: "throughput (tx/s)" },
      points: SEPARATIONS.flatMap((m) =>
        [1, 4].map((ratio) => ({
          series: `${m} separation`,
          x: ratio,
          ...seriesFig((d) => d.separation.find((x) => x.ratio === ratio && x.mode === m)?.tps ?? 0)
        }))
      )
    }
    const latencyConfigs = figureRuns[0]!.latency.map((l) => l.config)
    curves[`latency${suffix}`] = {
      title: `Fig. 7 (${tag}): latency, work before vs after consensus, ${repeatsNote}`,
      x: { title: "configuration", labels: latencyConfigs },
      y: { title: "latency (ms)" },
      points: (["p50", "p90"] as const).flatMap((q) =>
        latencyConfigs.map((config, i) => ({
          series: q,
          x: i,
          ...seriesFig((d) => d.latency.find((l) => l.config === config)![q])
        }))
      )
    }
    curves[`architecture${suffix}`] = {
      title: `Fig. 4 (${tag}): throughput per node, ${repeatsNote}`,
      x: { title: "workers", ticks: s.workerCounts },
      y: { title: "throughput per node (tx/s)" },
      points: (["asymmetric", "symmetric"] as const).flatMap((k) =>
        s.workerCounts.map((n) => ({
          series: k === "asymmetric" ? "Remora (asymmetric)" : "SymArch",
          x: n,
          ...seriesFig((d) => d.architecture.find((a) => a.workers === n)![k])
        }))
      )
    }
    const moduleNames = [...new Set(modules.map((m) => `${m.module}, ${m.objectsPerTx} objects`))]
    curves.modules = {
      title: "Fig. 12: version assignment and SFS alone (pure cores, in-process, one run)",
      x: { title: "batch size (transactions)", scale: "log" },
      y: { title: "tx per CPU-second", scale: "log", format: "~s" },
      points: moduleNames.flatMap((name) =>
        modules
          .filter((m) => `${m.module}, ${m.objectsPerTx} objects` === name)
          .map((m) => ({ series: name, x: m.batch, y: m.tps }))
      )
    }

    // ---- report --------------------------------------------------------------------------------------------
    printTable(
      "Remora: configurations",
      ["figure (backend)", "configuration", "tx/s", "completed/CPU-s", "p50 ms", "p90 ms", "transfers/tx"],
      rows
    )
    printTable(
      "Remora: Fig. 12, serial modules alone (pure cores, in-process, per CPU-second)",
      ["module", "batch", "objects/tx", "tx/s"],
      modules.map((m) => [m.module, m.batch, m.objectsPerTx, m.tps])
    )
    const allRatios = { ...ratios, ...simulatedRatios } as Record<string, { median: number; min: number; max: number }>
    printTable(
      "Remora: ratios (median and min–max; Sim: over simulator seeds) and goals",
      ["name", "median", "min–max", "goal"],
      [
        ...Object.entries(allRatios).map(([k, v]) => [
          k,
          v.median,
          `${v.min}–${v.max}`,
          GOALS[k.replace(/Sim$|Processes$/, "").replace(/O\d+$/, "")] === undefined
            ? ""
            : `>= ${GOALS[k.replace(/Sim$|Processes$/, "").replace(/O\d+$/, "")]}`
        ]),
        [
          "coordinatorDispatchTps",
          metrics.coordinatorDispatchTps.median,
          `${metrics.coordinatorDispatchTps.min}–${metrics.coordinatorDispatchTps.max}`,
          `>= ${GOALS.coordinatorDispatchTps}`
        ],
        ["idle worker RSS MB", metrics.rss.idleWorkerMb, "", "< 120"]
      ]
    )
    printFig8(fig8)
    const command = `pnpm bench remora${quick ? " --quick" : ""}${real ? " --real" : ""}`
    const path = await writeResult({
      suite: "remora",
      quick,
      command,
      machine: machineNow(machineStart),
      ratios,
      ...(real
        ? {}
        : {
            simulated: {
              note:
                "Figs. 4-7 on the seeded simulator: the real coordinator and worker cores in this process, virtual time, " +
                `the paper's service times x${backend.timeScale} on ${backend.coresPerWorker} virtual cores per worker, a modelled network; ` +
                `repeated over seeds ${seeds.join(", ")}. Never compared with a measured peer.`,
              ratios: simulatedRatios,
              figures: figuresSection
            }
          }),
      metrics: { ...metrics, [FIG8_SECTION]: fig8.metrics },
      curves,
      sections: { [FIG8_SECTION]: fig8Section(quick, command, fig8Start, fig8).info }
    })
    console.log(`\nwrote ${path} and its plots (${metrics.seconds} s)`)
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    await cleanUp()
  }
}
