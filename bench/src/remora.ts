/**
 * `pnpm bench remora [--quick] [--real]`: the Remora paper's evaluation (§6: Figs. 4-7, 11, 12) as ratios
 * measured in one run.
 *
 * - Fig. 11 (the coordinator's dispatch rate) and RSS run on real processes: a nats-server, a coordinator host
 *   and 8 worker hosts (remora/host.ts), each configuration a fresh cluster with a real coordinator (mempool,
 *   window consensus, core, batched tells over NATS) and real workers (Ed25519 checks, contracts, virtual
 *   cores). The rate is per CPU-second of the coordinator process: this run shares two cores with other
 *   sessions, so its wall clock measures them too (it is reported next to it).
 * - Figs. 4-7 (scheduling, separation, latency, architecture) run on the seeded simulator by default: the real
 *   coordinator and worker cores in this process, in virtual time, with the paper's service times on 16 virtual
 *   cores per worker and a modelled network. `--real` runs them on the real processes instead (times ×40, 2
 *   virtual cores per worker); on a machine shared with other sessions their run-queue waits dominate those
 *   numbers.
 * - Fig. 12 (version assignment and SFS alone) runs the pure cores in this process, per CPU-second.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { startNatsServer } from "@reef/kernel"
import type { PolicyName, Separation } from "@reef/remora"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { realBackend, simBackend } from "./remora/backends.js"
import { coreSweep } from "./remora/core-bench.js"
import { driverSweep } from "./remora/driver-bench.js"
import type { ExperimentResult } from "./remora/experiment.js"
import { FIG5_POLICIES, type FigureSettings, runFigures, SEPARATIONS } from "./remora/figures.js"
import { type Hosts, runConfiguration, startHosts } from "./remora/hosts.js"
import { machine, printTable, resultsDir, round, writeLegacyResult } from "./report.js"
import { lineChart } from "./svg.js"

const WORKERS = 8
/** Fig. 11: bursts per policy (the best one counts). */
const DISPATCH_BURSTS = 3

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
  objects: quick ? [2, 5] : [2, 3, 5],
  zipfs: quick ? [0.9] : [0.8, 0.9],
  workerCounts: quick ? [1, 4, 8] : [1, 2, 3, 4, 6, 8],
  workers: WORKERS
})

export const GOALS: Readonly<Record<string, number>> = {
  sfsOverRoundRobinZipf09: 1.25,
  coordinatorSeparationSpeedup4to1: 2.5,
  preConsensusLatencySavedOverStatelessTime: 0.9,
  asymmetricOverSymmetricPerNode: 1.2,
  coordinatorDispatchTps: 100_000
}

export const run = async (quick: boolean, flags: ReadonlyArray<string> = []): Promise<void> => {
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

    // Fig. 11: zero service time, uniform YCSB, a burst per policy. The workers run at the lowest CPU priority so
    // that their signature checks (which cannot keep up on two cores) leave the coordinator its share.
    const burstTxs = quick ? 20_000 : 30_000
    for (const w of h.workers) w.renice(19)
    const dispatch: Array<{ policy: PolicyName; separation: Separation; result: ExperimentResult }> = []
    // Other sessions' load only ever slows a burst down: the best of a few is the closest to the coordinator's own,
    // after a burst that warms the coordinator host's JIT up. The policies take turns, so a busy spell of the
    // machine lands on one burst of each rather than on every burst of one policy.
    const dispatchExperiment = (d: { policy: PolicyName; separation: Separation }) => ({
      params: { policy: d.policy, separation: d.separation },
      windowMs: 1,
      blockIntervalMs: 20,
      maxBlockTxs: 2000,
      workload: { keys: 10_000_000, objectsPerTx: 2, zipf: 0, statelessCostUs: 0, statefulCostUs: 0 },
      load: { kind: "burst" as const, txs: burstTxs }
    })
    await runConfiguration(h, WORKERS, 2, dispatchExperiment({ policy: "round-robin", separation: "none" }))
    const best = new Map<string, ExperimentResult>()
    for (let i = 0; i < DISPATCH_BURSTS; i++) {
      for (const d of DISPATCH_POLICIES(quick)) {
        const r = await runConfiguration(h, WORKERS, 2, dispatchExperiment(d))
        const key = `${d.policy}/${d.separation}`
        const before = best.get(key)
        if (before === undefined || r.dispatchTps > before.dispatchTps) best.set(key, r)
      }
    }
    for (const d of DISPATCH_POLICIES(quick)) {
      const result = best.get(`${d.policy}/${d.separation}`)
      if (result === undefined) throw new Error("no dispatch burst ran")
      dispatch.push({ ...d, result })
      rows.push(["Fig. 11 (processes)", `${d.policy}, separation ${d.separation}`, "", result.dispatchTps, "", "", ""])
      say(
        `Fig. 11 ${d.policy}/${d.separation}: ${result.dispatchTps} tx per coordinator CPU-second ` +
          `(${result.wallDispatchTps}/s wall, ${result.cpuUsPerTx} µs CPU per tx with admission)`
      )
    }
    for (const w of h.workers) w.renice(0)
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
    const roundRobin = dispatch.find((d) => d.policy === "round-robin")!.result
    const remoraPath = dispatch.find((d) => d.policy === "sfs" && d.separation === "coordinator")!.result

    // Figs. 5, 6, 7, 4.
    const backend = real ? realBackend(h, quick) : simBackend(quick)
    const figures = await runFigures(backend, figureSettings(quick), roundRobin.cpuUsPerTx, (c, m) => {
      rows.push([
        `${c.figure} (${real ? "processes" : "simulator"})`,
        c.name,
        m.throughput,
        "",
        m.p50Ms,
        m.p90Ms,
        m.leaseTransfersPerTx
      ])
      say(
        `${c.figure} ${c.name}: ${m.throughput} tx/s` +
          (c.load.kind === "rate" ? `, p50 ${m.p50Ms} ms, p90 ${m.p90Ms} ms` : "")
      )
    })

    const peaks = {
      coordinatorHost: await h.coordinator.memory(),
      workers: await Promise.all(h.workers.map((w) => w.memory()))
    }

    // ---- ratios ------------------------------------------------------------------------------------------
    const s = figureSettings(quick)
    const tpsOf = (zipf: number, objects: number, policy: PolicyName) =>
      figures.policies.find((p) => p.zipf === zipf && p.objects === objects && p.policy === policy)?.tps ?? 0
    const sfsOverRr = s.objects.map((o) => ({ objects: o, ratio: tpsOf(0.9, o, "sfs") / tpsOf(0.9, o, "round-robin") }))
    const sepOf = (ratio: number, mode: Separation) =>
      figures.separation.find((x) => x.ratio === ratio && x.mode === mode)?.tps ?? 0
    const latencyOf = (config: string) => figures.latency.find((l) => l.config === config)!
    const remora = latencyOf("Pre-Sep + Pre-Sched")
    const postBoth = latencyOf("Post-Sep + Post-Sched")
    const largest = figures.architecture[figures.architecture.length - 1]!
    const statelessMs = figures.latencyStatelessMs
    const ratios = {
      sfsOverRoundRobinZipf09: round(Math.max(...sfsOverRr.map((r) => r.ratio)), 3),
      coordinatorSeparationSpeedup4to1: round(sepOf(4, "coordinator") / sepOf(4, "none"), 3),
      workerSeparationSpeedup4to1: round(sepOf(4, "worker") / sepOf(4, "none"), 3),
      coordinatorSeparationSpeedup1to1: round(sepOf(1, "coordinator") / sepOf(1, "none"), 3),
      preConsensusLatencySavedOverStatelessTime: round((postBoth.p50 - remora.p50) / statelessMs, 3),
      preConsensusLatencySavedOverStatelessTimeP90: round((postBoth.p90 - remora.p90) / statelessMs, 3),
      asymmetricOverSymmetricPerNode: round(largest.asymmetric / largest.symmetric, 3),
      coordinatorDispatchOverRoundRobin: round(remoraPath.dispatchTps / roundRobin.dispatchTps, 3)
    }
    const metrics = {
      coordinatorDispatchTps: remoraPath.dispatchTps,
      coordinatorDispatchTpsDefinition:
        "SFS with coordinator-based separation (Remora's full path), zero service time, uniform YCSB 2 objects, " +
        `${burstTxs} transactions admitted at once (best of ${DISPATCH_BURSTS} bursts, policies taking turns, after a warm-up burst), then committed transactions ` +
        "dispatched per CPU-second of the " +
        "coordinator process (stateless tasks at proposal, planning, version assignment, per-worker batched tells " +
        "over NATS to 8 worker processes at nice 19, and their reports); admission is reported apart",
      dispatch: Object.fromEntries(
        dispatch.map((d) => [
          `${d.policy}/${d.separation}`,
          {
            dispatchTps: d.result.dispatchTps,
            wallDispatchTps: d.result.wallDispatchTps,
            admissionTps: d.result.admissionTps,
            coordinatorCpuUsPerTx: d.result.cpuUsPerTx,
            completedDuringBurst: d.result.completed
          }
        ])
      ),
      dispatchInProcess: {
        note:
          "the same bursts through the coordinator's driver in the benchmark process, tasks encoded but not " +
          "published (us per tx: admission, proposal = stateless dispatch + planning, commit = version assignment + dispatch)",
        points: inProcess
      },
      modules: { backend: "pure cores in the benchmark process, tx per CPU-second", points: modules },
      figuresBackend: {
        name: backend.name,
        timeScale: backend.timeScale,
        workers: WORKERS,
        coresPerWorker: backend.coresPerWorker
      },
      policies: {
        note: "Fig. 5: no separation, post-consensus scheduling; tps and lease transfers per tx",
        points: figures.policies,
        sfsOverRoundRobinZipf09ByObjects: sfsOverRr.map((r) => ({ objects: r.objects, ratio: round(r.ratio, 3) }))
      },
      separation: { note: "Fig. 6: SFS, YCSB 3 objects zipf 0.9", points: figures.separation },
      latency: {
        note: `Fig. 7: uniform YCSB 2 objects, ${statelessMs} ms stateless, SFS, 300 ms window, 30% of capacity`,
        points: figures.latency
      },
      architecture: {
        note:
          "Fig. 4: uniform YCSB, round-robin, no separation; per node = throughput / (workers + 1) asymmetric, " +
          "/ workers SymArch, whose workers spend symmetricSchedulingCostUs per transaction of every block on a " +
          "virtual core (the coordinator's measured CPU per transaction, round-robin, x timeScale)",
        symmetricSchedulingCostUs: figures.symmetricSchedulingCostUs,
        points: figures.architecture.map((a) => ({
          ...a,
          asymmetric: round(a.asymmetric, 1),
          symmetric: round(a.symmetric, 1)
        }))
      },
      rss: {
        idleWorkerMb: Math.max(...idleWorkers.map((m) => m.rssMb)),
        idleCoordinatorHostMb: idleCoordinatorHost.rssMb,
        peakWorkerMb: Math.max(...peaks.workers.map((m) => m.peakRssMb)),
        peakCoordinatorHostMb: peaks.coordinatorHost.peakRssMb,
        note: "hosts live the whole run (one actor per configuration); the coordinator host also holds the signed workload"
      },
      seconds: round((performance.now() - started) / 1000, 1)
    }

    // ---- report --------------------------------------------------------------------------------------------
    printTable(
      "Remora: configurations",
      ["figure (backend)", "configuration", "tx/s", "dispatch/CPU-s", "p50 ms", "p90 ms", "transfers/tx"],
      rows
    )
    printTable(
      "Remora: Fig. 12, serial modules alone (pure cores, in-process, per CPU-second)",
      ["module", "batch", "objects/tx", "tx/s"],
      modules.map((m) => [m.module, m.batch, m.objectsPerTx, m.tps])
    )
    printTable(
      "Remora: ratios and goals",
      ["name", "value", "goal"],
      [
        ...Object.entries(ratios).map(([k, v]) => [k, v, GOALS[k] === undefined ? "" : `>= ${GOALS[k]}`]),
        ["coordinatorDispatchTps", remoraPath.dispatchTps, `>= ${GOALS.coordinatorDispatchTps}`],
        ["idle worker RSS MB", metrics.rss.idleWorkerMb, "< 120"]
      ]
    )
    const path = writeLegacyResult({ suite: "remora", quick, machine: machine(), metrics, ratios })
    writeCharts(figures, modules, s)
    console.log(`\nwrote ${path} and its SVGs (${metrics.seconds} s)`)
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    await cleanUp()
  }
}

const writeCharts = (
  figures: Awaited<ReturnType<typeof runFigures>>,
  modules: ReturnType<typeof coreSweep>,
  s: FigureSettings
) => {
  const svg = (name: string, content: string) => writeFileSync(join(resultsDir, `remora-${name}.svg`), content)
  for (const zipf of s.zipfs) {
    svg(
      `policies-zipf${String(zipf).replace(".", "")}`,
      lineChart({
        title: `Fig. 5: scheduling policies, YCSB zipf ${zipf}`,
        xLabel: "objects per transaction",
        yLabel: "throughput (tx/s)",
        series: FIG5_POLICIES.map((p) => ({
          name: p,
          points: s.objects.map(
            (o) =>
              [o, figures.policies.find((x) => x.zipf === zipf && x.objects === o && x.policy === p)?.tps ?? 0] as const
          )
        }))
      })
    )
  }
  svg(
    "separation",
    lineChart({
      title: "Fig. 6: stateless-stateful separation (SFS)",
      xLabel: "stateless : stateful",
      yLabel: "throughput (tx/s)",
      series: SEPARATIONS.map((m) => ({
        name: `${m} separation`,
        points: figures.separation.filter((x) => x.mode === m).map((x) => [x.ratio, x.tps] as const)
      }))
    })
  )
  svg(
    "latency",
    lineChart({
      title: "Fig. 7: latency, work before vs after consensus",
      xLabel: "percentile",
      yLabel: "latency (ms)",
      series: figures.latency.map((l) => ({ name: l.config, points: [[50, l.p50] as const, [90, l.p90] as const] }))
    })
  )
  svg(
    "architecture",
    lineChart({
      title: "Fig. 4: throughput per node",
      xLabel: "workers",
      yLabel: "throughput per node (tx/s)",
      series: [
        { name: "Remora (asymmetric)", points: figures.architecture.map((a) => [a.workers, a.asymmetric] as const) },
        { name: "SymArch", points: figures.architecture.map((a) => [a.workers, a.symmetric] as const) }
      ]
    })
  )
  const names = [...new Set(modules.map((m) => `${m.module}, ${m.objectsPerTx} objects`))]
  svg(
    "modules",
    lineChart({
      title: "Fig. 12: version assignment and SFS alone",
      xLabel: "batch size",
      yLabel: "tx per CPU-second",
      logY: true,
      series: names.map((name) => ({
        name,
        points: modules
          .filter((m) => `${m.module}, ${m.objectsPerTx} objects` === name)
          .map((m) => [m.batch, m.tps] as const)
      }))
    })
  )
}
