/**
 * `pnpm bench airdb [--quick]`: AirDB on serverless SMR against its paper's baselines, all in one run on this
 * machine (../shared/papers/airdb-s2mr.txt §5):
 *
 *   1. p99 latency against throughput for the five YCSB workloads (1 KB values): AirDB on JetStream and on
 *      Redis, SLSMR (three servers replaying the same JetStream log) and etcd (three members, strict
 *      serializable), plus AirDB on Azurite as the slow-storage point;
 *   2. cold start (process start to first committed transaction) at two state sizes for AirDB, SLSMR (full
 *      state download) and etcd (restore from its snapshot);
 *   3. a good client's p99 before and while bad clients flood the system (read-heavy, then update-heavy);
 *   4. a chaos timeline for AirDB: client kills, bad-client bursts and 0.1% failing storage calls, and the
 *      share of a good client's reads within a 100 ms SLA, late, and unreachable.
 *
 * Writes bench/results/airdb.json and SVGs. Peers missing (etcd, etcdctl, the Go load generator, Redis)
 * are installed by the bootstrap's peers step (`REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh`), which this
 * suite runs when they are missing; if that fails it stops with one line naming the command.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { credentials } from "@grpc/grpc-js"
import type { StorageOptions } from "@reef/airdb"
import { startAzurite } from "@reef/airdb/testing"
import { findRedisServerBinary, startRedisServer } from "@reef/devkit"
import { startNatsServer } from "@reef/kernel"
import { AirDBClient } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { etcdColdStartMs, findEtcdctl, saveEtcdSnapshot } from "./airdb/etcd-coldstart.js"
import type { LoadOutput, LoadSpec, LoadTarget } from "./airdb/load-process.js"
import { type Child, runLoad, runLoads, startChild } from "./airdb/processes.js"
import { MIXES, VALUE_BYTES, WORKLOADS, type Workload } from "./airdb/ycsb.js"
import {
  buildEtcdLoad,
  type EtcdCluster,
  etcdLoadAvailable,
  findEtcdBinary,
  parseEtcdLoadOutput,
  startEtcdCluster
} from "./peers/index.js"
import { runMeasured } from "./peers/proc.js"
import { machine, printTable, resultsDir, round, writeLegacyResult } from "./report.js"
import { lineChart } from "./svg.js"

interface Plan {
  readonly keySpace: number
  readonly points: ReadonlyArray<number>
  readonly durationMs: number
  readonly warmupMs: number
  readonly coldStartKeys: readonly [number, number]
  readonly coldStartRuns: number
  readonly goodRate: number
  readonly goodMs: number
  readonly chaosMs: number
}

const QUICK: Plan = {
  keySpace: 2_000,
  points: [8, 128],
  durationMs: 2_000,
  warmupMs: 1_000,
  coldStartKeys: [10_000, 100_000],
  coldStartRuns: 3,
  goodRate: 100,
  goodMs: 4_000,
  chaosMs: 20_000
}

const FULL: Plan = {
  keySpace: 20_000,
  points: [8, 32, 128, 384],
  durationMs: 6_000,
  warmupMs: 2_000,
  coldStartKeys: [100_000, 1_000_000],
  coldStartRuns: 3,
  goodRate: 200,
  goodMs: 10_000,
  chaosMs: 120_000
}

const SYSTEMS = ["airdb-jetstream", "airdb-redis", "slsmr", "etcd"] as const
type System = (typeof SYSTEMS)[number] | "airdb-azurite"

interface Point {
  readonly system: System
  readonly workload: Workload
  readonly concurrency: number
  readonly throughput: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
}

/** One committed put through reef.v1.AirDB (an SLSMR server's first transaction). */
const grpcPut = (address: string, key: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const client = new AirDBClient(address, credentials.createInsecure())
    client.put({ key: Buffer.from(key), value: Buffer.from("1") }, (e) => {
      client.close()
      if (e) reject(e)
      else resolve()
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** etcd, etcdctl, the Go load generator and redis-server, installed by the bootstrap's peers step if missing. */
const ensurePeers = async (): Promise<string> => {
  const missing = () =>
    [
      findEtcdBinary() === undefined ? "etcd" : undefined,
      findEtcdctl() === undefined ? "etcdctl" : undefined,
      findRedisServerBinary() === undefined ? "redis-server" : undefined,
      etcdLoadAvailable() ? undefined : "go + etcd client sources"
    ].filter((x) => x !== undefined)
  if (missing().length > 0) {
    console.log(`bench airdb: installing ${missing().join(", ")} (bash bench/go/build.sh, the bootstrap's peers step)`)
    spawnSync("bash", [join(resultsDir, "..", "go", "build.sh")], { stdio: "inherit" })
  }
  if (missing().length > 0) {
    throw new Error(`bench airdb needs ${missing().join(", ")}: run REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh`)
  }
  return await buildEtcdLoad({ install: true })
}

/** One etcdload run of a YCSB mix (etcd's own Go client, so the client is not the limit). */
const etcdYcsb = async (
  binary: string,
  endpoints: ReadonlyArray<string>,
  o: {
    readonly workload: Workload
    readonly concurrency: number
    readonly durationMs: number
    readonly keySpace: number
    readonly rate?: number
    readonly prefill?: boolean
    readonly nice?: boolean
  }
): Promise<{
  readonly throughput: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
}> => {
  const mix = MIXES[o.workload]
  const args = [
    `-endpoints=${endpoints.join(",")}`,
    "-op=ycsb",
    `-read=${mix.read}`,
    `-update=${mix.update}`,
    `-insert=${mix.insert}`,
    `-rmw=${mix.rmw}`,
    `-clients=${o.concurrency}`,
    `-conns=${Math.min(8, o.concurrency)}`,
    `-value-size=${VALUE_BYTES}`,
    `-key-space=${o.keySpace}`,
    `-rate=${o.rate ?? 0}`,
    "-timeout=2s",
    `-prefill=${o.prefill === true}`,
    `-duration=${o.durationMs}ms`
  ]
  const r =
    o.nice === true
      ? await runMeasured("nice", ["-n", "19", binary, ...args], { timeoutMs: 3_600_000 })
      : await runMeasured(binary, args, { timeoutMs: 3_600_000 })
  if (r.code !== 0) throw new Error(`etcdload exited with ${r.code}:\n${r.stderr}`)
  const out = parseEtcdLoadOutput(r.stdout)
  return { throughput: out.throughputPerSec, p50Ms: out.p50Ms, p99Ms: out.p99Ms, errors: out.errors }
}

export const run = async (quick: boolean): Promise<void> => {
  const plan = quick ? QUICK : FULL
  const loadBefore = loadavg()
  const etcdload = await ensurePeers()
  const scope = Effect.runSync(Scope.make())
  const inScope = <A, E>(e: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.extend(e, scope))
  const etcdClusters: Array<EtcdCluster> = []
  const children: Array<Child<unknown>> = []
  const cleanUp = async () => {
    for (const c of children) await c.kill()
    for (const e of etcdClusters) await e.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  // Ctrl-C or a kill: stop every server and process this run started before exiting.
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`bench airdb: ${signal}, stopping what it started`)
    void cleanUp().finally(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  try {
    const nats = await inScope(startNatsServer({ jetstream: true }))
    const redis = await inScope(startRedisServer())
    const azurite = await inScope(startAzurite())
    const storages = {
      jetstream: { backend: "jetstream", natsUrl: nats.url } as StorageOptions,
      redis: { backend: "redis", redisPort: redis.port } as StorageOptions,
      azure: {
        backend: "azure",
        azureConnectionString: (await import("@reef/airdb")).azuriteConnectionString(azurite.port)
      } as StorageOptions
    }
    const airdb = (
      storage: StorageOptions,
      store: string,
      extra: Partial<Extract<LoadTarget, { kind: "airdb" }>> = {}
    ): LoadTarget => ({
      kind: "airdb",
      storage,
      store,
      cacheBytes: 512 * 1024 * 1024,
      ...extra
    })
    const fill = (target: LoadTarget, from: number, to: number) =>
      runLoad({ mode: "fill", target, fill: { from, to, batch: 256 }, concurrency: 4 })
    const loadSpec = (target: LoadTarget, workload: Workload, concurrency: number, i: number): LoadSpec => ({
      mode: "load",
      target,
      workload,
      concurrency,
      durationMs: plan.durationMs,
      warmupMs: plan.warmupMs,
      keySpace: plan.keySpace,
      insertBase: plan.keySpace + (i + 1) * 10_000_000
    })
    /** Two client processes (a store shared by several clients), half the concurrency each. */
    const twoClients = (target: LoadTarget, workload: Workload, concurrency: number) =>
      runLoads([0, 1].map((i) => loadSpec(target, workload, Math.max(1, concurrency / 2), i)))

    // ---- 1. p99 against throughput ---------------------------------------------------------------------------
    const points: Array<Point> = []
    const record = (
      system: System,
      workload: Workload,
      concurrency: number,
      o: { throughput: number; p50Ms: number; p99Ms: number; errors: number }
    ) => {
      points.push({
        system,
        workload,
        concurrency,
        throughput: o.throughput,
        p50Ms: o.p50Ms,
        p99Ms: o.p99Ms,
        errors: o.errors
      })
      console.log(
        `  ${system} ${workload} c=${concurrency}: ${Math.round(o.throughput)} ops/s, p99 ${round(o.p99Ms)} ms`
      )
    }
    console.log("\nbench airdb: p99 against throughput (YCSB, 1 KB values)")
    const etcd = await startEtcdCluster({ n: 3, extraArgs: ["--quota-backend-bytes", String(8 * 1024 ** 3)] })
    etcdClusters.push(etcd)
    for (const system of SYSTEMS) {
      const store = `y_${system.replace("-", "_")}`
      let target: LoadTarget
      if (system === "etcd") {
        await etcdYcsb(etcdload, etcd.endpoints, {
          workload: "read-only",
          concurrency: 8,
          durationMs: 0,
          keySpace: plan.keySpace,
          prefill: true
        })
        target = { kind: "grpc", addresses: [] }
      } else if (system === "slsmr") {
        await fill(airdb(storages.jetstream, store), 0, plan.keySpace)
        const servers = [0, 1, 2].map((i) =>
          startChild<{ address: string }>(
            "server-process",
            { storage: storages.jetstream, store, id: `s${i}` },
            { heapMb: 4096 }
          )
        )
        children.push(...servers)
        target = { kind: "grpc", addresses: await Promise.all(servers.map(async (s) => (await s.first).address)) }
      } else {
        target = airdb(system === "airdb-redis" ? storages.redis : storages.jetstream, store)
        await fill(target, 0, plan.keySpace)
      }
      for (const workload of WORKLOADS) {
        for (const c of plan.points) {
          if (system === "etcd") {
            record(
              system,
              workload,
              c,
              await etcdYcsb(etcdload, etcd.endpoints, {
                workload,
                concurrency: c,
                durationMs: plan.durationMs,
                keySpace: plan.keySpace
              })
            )
          } else {
            record(system, workload, c, await twoClients(target, workload, c))
          }
        }
      }
      if (system === "slsmr") for (const s of children.splice(0)) await s.kill()
    }
    // The slow-storage point: AirDB on Azure Append Blobs (Azurite).
    const azureTarget = airdb(storages.azure, "y_azure")
    await fill(azureTarget, 0, plan.keySpace)
    for (const workload of WORKLOADS) record("airdb-azurite", workload, 16, await twoClients(azureTarget, workload, 16))

    // ---- 2. cold start ---------------------------------------------------------------------------------------
    console.log("\nbench airdb: cold start (process start to first committed transaction)")
    const cold: Record<string, Record<string, number>> = {}
    for (const keys of plan.coldStartKeys) {
      const mb = Math.round((keys * VALUE_BYTES) / 1024 ** 2)
      const store = `cs_${keys}`
      // A JetStream server of its own, removed (with its store) once measured: the 1 GB run's data is not kept.
      // A child of the run's scope: a failure closes it with the rest.
      const sizeScope = Effect.runSync(Scope.fork(scope, ExecutionStrategy.sequential))
      const coldNats = await Effect.runPromise(Scope.extend(startNatsServer({ jetstream: true }), sizeScope))
      const coldStorage: StorageOptions = { backend: "jetstream", natsUrl: coldNats.url }
      const target = airdb(coldStorage, store)
      const filled = Date.now()
      await fill(target, 0, keys)
      console.log(`  ${mb} MB loaded into AirDB in ${round((Date.now() - filled) / 1000, 1)} s`)
      const airdbRuns: Array<number> = []
      const airdbOpens: Array<number> = []
      let lastStats: Record<string, number> | undefined
      for (let i = 0; i < plan.coldStartRuns; i++) {
        const r = await startChild<{
          coldStartMs: number
          openMs: number
          clientStats: Record<string, number>
        }>("load-process", {
          mode: "coldstart",
          target,
          spawnedAt: Date.now()
        }).first
        airdbRuns.push(r.coldStartMs)
        airdbOpens.push(r.openMs)
        lastStats = r.clientStats
      }
      // SLSMR: one server downloads the whole state, then serves.
      const spawnedAt = Date.now()
      const server = startChild<{ address: string; loadMs: number }>(
        "server-process",
        { storage: coldStorage, store, id: "cold" },
        { heapMb: 12_288 }
      )
      children.push(server)
      const ready = await server.first
      // The first transaction comes from this (running) process, as etcd's comes from a running etcdctl: the
      // clock measures the server's start, not a client process's.
      await grpcPut(ready.address, `coldstart-${keys}`)
      const slsmrMs = Date.now() - spawnedAt
      await server.kill()
      await Effect.runPromise(Scope.close(sizeScope, Exit.void))
      // etcd: load the same keys, snapshot, restore three members, first write.
      const source = await startEtcdCluster({ n: 3, extraArgs: ["--quota-backend-bytes", String(8 * 1024 ** 3)] })
      etcdClusters.push(source)
      await etcdYcsb(etcdload, source.endpoints, {
        workload: "read-only",
        concurrency: 16,
        durationMs: 0,
        keySpace: keys,
        prefill: true
      })
      const dir = mkdtempSync(join(tmpdir(), "reef-airdb-etcdsnap-"))
      const snapshot = join(dir, "snapshot.db")
      await saveEtcdSnapshot(source.endpoints[0]!, snapshot)
      await source.stop()
      const etcdMs = await etcdColdStartMs(snapshot)
      rmSync(dir, { recursive: true, force: true })
      cold[`${mb}MB`] = {
        keys,
        airdbMs: median(airdbRuns),
        slsmrMs,
        slsmrLoadMs: ready.loadMs,
        etcdMs,
        // What the cold start read: the client's open (indexes and tail; the rest is node's start and the
        // first commit), the indexes' size, and the command-log entries it replayed (past the chain's end).
        airdbOpenMs: Math.round(median(airdbOpens)),
        airdbIndexBytes: lastStats?.indexBytes ?? 0,
        airdbLogEntries: lastStats?.entries ?? 0,
        airdbReplayedEntries: (lastStats?.entries ?? 0) - (lastStats?.chainEnd ?? 0)
      }
      console.log(`  ${mb} MB: AirDB ${median(airdbRuns)} ms, SLSMR ${slsmrMs} ms, etcd ${etcdMs} ms`)
    }

    // ---- 3. a good client, then bad clients -------------------------------------------------------------------
    console.log("\nbench airdb: a good client's p99 before and while bad clients flood")
    const good = (target: LoadTarget): LoadSpec => ({
      mode: "load",
      target,
      workload: "read-only",
      concurrency: 4,
      rate: plan.goodRate,
      durationMs: plan.goodMs,
      warmupMs: 500,
      keySpace: plan.keySpace
    })
    const isolation: Record<string, Record<string, number>> = {}
    const goodTarget = airdb(storages.jetstream, "y_airdb_jetstream")
    {
      const before = await runLoad(good(goodTarget))
      const row: Record<string, number> = { p99BeforeMs: before.p99Ms }
      for (const flood of ["read-heavy", "update-heavy"] as const) {
        // Bad clients run at nice 19: what they do to the good client goes through the system, not this
        // 2-core machine's shared CPU.
        const bad = [0, 1].map((i) =>
          startChild<LoadOutput>(
            "load-process",
            { ...loadSpec(goodTarget, flood, 64, i + 4), durationMs: plan.goodMs + 4_000, warmupMs: 0 },
            { nice: 19 }
          )
        )
        await sleep(1_500)
        const during = await runLoad(good(goodTarget))
        await Promise.all(bad.map((b) => b.first))
        row[`p99${flood === "read-heavy" ? "ReadFlood" : "UpdateFlood"}Ms`] = during.p99Ms
      }
      isolation.airdb = row
    }
    {
      const goodEtcd = () =>
        etcdYcsb(etcdload, etcd.endpoints, {
          workload: "read-only",
          concurrency: 4,
          durationMs: plan.goodMs,
          keySpace: plan.keySpace,
          rate: plan.goodRate
        })
      const before = await goodEtcd()
      const row: Record<string, number> = { p99BeforeMs: before.p99Ms }
      for (const flood of ["read-heavy", "update-heavy"] as const) {
        const bad = etcdYcsb(etcdload, etcd.endpoints, {
          workload: flood,
          concurrency: 128,
          durationMs: plan.goodMs + 4_000,
          keySpace: plan.keySpace,
          nice: true
        })
        await sleep(1_500)
        const during = await goodEtcd()
        await bad
        row[`p99${flood === "read-heavy" ? "ReadFlood" : "UpdateFlood"}Ms`] = during.p99Ms
      }
      isolation.etcd = row
    }
    const inflation = (row: Record<string, number>) =>
      Math.max(row.p99ReadFloodMs!, row.p99UpdateFloodMs!) / Math.max(row.p99BeforeMs!, 0.001)
    console.log(`  AirDB ${JSON.stringify(isolation.airdb)}\n  etcd ${JSON.stringify(isolation.etcd)}`)

    // ---- 4. chaos --------------------------------------------------------------------------------------------
    console.log("\nbench airdb: chaos (client kills, bad-client bursts, 0.1% failing storage calls)")
    const chaosStore = "y_airdb_jetstream"
    const peer = (i: number) =>
      startChild<LoadOutput>("load-process", {
        ...loadSpec(airdb(storages.jetstream, chaosStore, { failureRate: 0.001 }), "update-heavy", 4, 20 + i),
        durationMs: plan.chaosMs + 10_000
      })
    const peers = [peer(0), peer(1)]
    const events: Array<{ readonly atMs: number; readonly event: string }> = []
    const goodRun = runLoad({
      ...good(airdb(storages.jetstream, chaosStore, { failureRate: 0.001 })),
      durationMs: plan.chaosMs,
      giveUpMs: 2_000,
      slaMs: 100
    })
    const chaosStart = Date.now()
    let k = 0
    while (Date.now() - chaosStart < plan.chaosMs - 3_000) {
      await sleep(3_000)
      const at = Date.now() - chaosStart
      if (k % 2 === 0) {
        const i = (k / 2) % peers.length
        await peers[i]!.kill()
        peers[i] = peer(10 + k)
        events.push({ atMs: at, event: `killed client ${i} (SIGKILL), restarted` })
      } else {
        const burst = [0, 1].map((i) =>
          startChild<LoadOutput>(
            "load-process",
            {
              ...loadSpec(
                airdb(storages.jetstream, chaosStore),
                i === 0 ? "read-heavy" : "update-heavy",
                32,
                40 + k + i
              ),
              durationMs: 2_500,
              warmupMs: 0
            },
            { nice: 19 }
          )
        )
        children.push(...burst)
        events.push({ atMs: at, event: "bad-client burst (read-heavy + update-heavy)" })
      }
      k++
    }
    const chaos = await goodRun
    for (const p of peers) await p.kill()
    const attempted = chaos.withinSla + chaos.late + chaos.unreachable
    const pct = (n: number) => (attempted === 0 ? 0 : round((100 * n) / attempted, 3))
    console.log(
      `  ${attempted} reads: ${pct(chaos.withinSla)}% within 100 ms, ${pct(chaos.late)}% late, ${pct(chaos.unreachable)}% unreachable`
    )

    // ---- results ---------------------------------------------------------------------------------------------
    const best = (system: System, workload: Workload) =>
      Math.max(...points.filter((p) => p.system === system && p.workload === workload).map((p) => p.throughput))
    const [small, large] = plan.coldStartKeys.map((keys) => cold[`${Math.round((keys * VALUE_BYTES) / 1024 ** 2)}MB`]!)
    const ratios = {
      coldStart1GBSlsmrOverAirdb: round(large!.slsmrMs! / large!.airdbMs!),
      coldStart1GBEtcdOverAirdb: round(large!.etcdMs! / large!.airdbMs!),
      coldStart1GBOver100MBAirdb: round(large!.airdbMs! / small!.airdbMs!),
      readHeavyThroughputVsEtcd: round(best("airdb-jetstream", "read-heavy") / best("etcd", "read-heavy")),
      goodClientP99InflationAirdb: round(inflation(isolation.airdb!)),
      goodClientP99InflationEtcd: round(inflation(isolation.etcd!)),
      chaosUnreachablePct: pct(chaos.unreachable)
    }
    const loadAfter = loadavg()
    const path = writeLegacyResult({
      suite: "airdb",
      quick,
      machine: {
        ...machine(),
        loadavgBefore: loadBefore.map((x) => round(x)),
        loadavgAfter: loadAfter.map((x) => round(x))
      },
      metrics: {
        plan: { ...plan },
        coldStartSizes: quick
          ? "quick: the '100MB' and '1GB' ratios use the two sizes of this plan (10 MB and 100 MB)"
          : "100 MB and 1 GB",
        curves: Object.fromEntries(points.map((p) => [`${p.system}/${p.workload}/c${p.concurrency}`, { ...p }])),
        coldStart: cold,
        isolation,
        chaos: {
          reads: attempted,
          withinSlaPct: pct(chaos.withinSla),
          latePct: pct(chaos.late),
          unreachablePct: pct(chaos.unreachable),
          p99Ms: chaos.p99Ms,
          events,
          throughputPerSecond: chaos.timeline100ms.reduce<Array<number>>((acc, n, i) => {
            acc[Math.floor(i / 10)] = (acc[Math.floor(i / 10)] ?? 0) + n
            return acc
          }, [])
        }
      },
      ratios
    })
    for (const workload of WORKLOADS) {
      const systems = [...new Set(points.map((p) => p.system))]
      writeFileSync(
        join(resultsDir, `airdb-${workload}.svg`),
        lineChart({
          title: `AirDB bench: ${workload} (p99 against throughput)`,
          xLabel: "throughput (ops/s)",
          yLabel: "p99 latency (ms)",
          logY: true,
          series: systems.map((s) => ({
            name: s,
            points: points
              .filter((p) => p.system === s && p.workload === workload)
              .map((p) => [p.throughput, p.p99Ms] as const)
          }))
        })
      )
    }
    writeFileSync(
      join(resultsDir, "airdb-chaos.svg"),
      lineChart({
        title: "AirDB chaos: the good client's reads per second",
        xLabel: "time (s)",
        yLabel: "reads/s",
        series: [
          {
            name: "good client",
            points: chaos.timeline100ms
              .reduce<Array<number>>((acc, n, i) => {
                acc[Math.floor(i / 10)] = (acc[Math.floor(i / 10)] ?? 0) + n
                return acc
              }, [])
              .map((n, i) => [i, n] as const)
          }
        ]
      })
    )
    printTable(
      "AirDB: best throughput per workload (ops/s)",
      ["system", ...WORKLOADS],
      [...new Set(points.map((p) => p.system))].map((s) => [s, ...WORKLOADS.map((w) => Math.round(best(s, w)))])
    )
    printTable(
      "Cold start (ms, process start to first commit)",
      ["size", "AirDB", "SLSMR", "etcd"],
      Object.entries(cold).map(([size, c]) => [size, c.airdbMs!, c.slsmrMs!, c.etcdMs!])
    )
    printTable("Ratios", ["ratio", "value"], Object.entries(ratios))
    console.log(
      `\nload average before ${loadBefore.map((x) => round(x)).join(" ")}, after ${loadAfter.map((x) => round(x)).join(" ")}`
    )
    console.log(`wrote ${path}`)
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    await cleanUp()
  }
}
