/**
 * `pnpm bench airdb [--quick]`: AirDB on serverless SMR against its paper's baselines, all in one run on this
 * machine (../shared/papers/airdb-s2mr.txt §5):
 *
 *   1. p99 latency against throughput for the YCSB workloads (1 KB values; all five in a full run, read-heavy
 *      alone with --quick): AirDB on JetStream and on Redis, SLSMR (three servers replaying the same
 *      JetStream log) and etcd (three members, strict serializable), plus AirDB on Azurite as the slow-storage
 *      point, each curve whole; the headline, read-heavy AirDB against etcd, at one stated concurrency in
 *      interleaved rounds;
 *   2. cold start (process start to first committed transaction) at two state sizes for AirDB, SLSMR (full
 *      state download) and etcd (restore from its snapshot), the same number of interleaved runs on each side;
 *   3. a good client's p99 before and while bad clients flood the system (read-heavy, then update-heavy),
 *      AirDB and etcd in interleaved rounds;
 *   4. a chaos timeline for AirDB: client kills, bad-client bursts and 0.1% failing storage calls, and the
 *      share of a good client's reads within a 100 ms SLA, late, and unreachable.
 *
 * Every ratio is the median and min–max over interleaved rounds (harness: 3, 2 with --quick); latencies of
 * several client processes come from one merged hdr histogram. Writes bench/results/airdb.json and plots. Peers missing (etcd, etcdctl, the Go load generator, Redis)
 * are installed by the bootstrap's peers step (`REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh`), which this
 * suite runs when they are missing; if that fails it stops with one line naming the command.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { credentials } from "@grpc/grpc-js"
import type { StorageOptions } from "@reef/airdb"
import { startAzurite } from "@reef/airdb/testing"
import { findRedisServerBinary, startRedisServer } from "@reef/devkit"
import { startNatsServer } from "@reef/kernel"
import { AirDBClient } from "@reef/proto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { etcdColdStartMs, findEtcdctl, saveEtcdSnapshot } from "./airdb/etcd-coldstart.js"
import type { LoadOutput, LoadSpec, LoadTarget } from "./airdb/load-process.js"
import { type Child, runLoad, runLoads, startChild } from "./airdb/processes.js"
import { MIXES, VALUE_BYTES, WORKLOADS, type Workload } from "./airdb/ycsb.js"
import { type Curve, figureOf, interleave, machineNow, ratioOf, readMachine, writeResult } from "./harness/index.js"
import {
  buildEtcdLoad,
  type EtcdCluster,
  etcdLoadAvailable,
  findEtcdBinary,
  parseEtcdLoadOutput,
  startEtcdCluster
} from "./peers/index.js"
import { runMeasured } from "./peers/proc.js"
import { printTable, resultsDir, round } from "./report.js"

interface Plan {
  readonly keySpace: number
  /** The YCSB workloads whose curves are drawn (the headline's read-heavy always is). */
  readonly workloads: ReadonlyArray<Workload>
  /** Operations in flight at each point of a curve. */
  readonly points: ReadonlyArray<number>
  /** The one concurrency the headline read-heavy ratio is taken at, on both sides. */
  readonly operatingPoint: number
  readonly durationMs: number
  /** Unmeasured load before every measured run, on every system. */
  readonly warmupMs: number
  readonly coldStartKeys: readonly [number, number]
  readonly goodRate: number
  readonly goodMs: number
  readonly chaosMs: number
}

const QUICK: Plan = {
  keySpace: 2_000,
  workloads: ["read-heavy"],
  points: [8, 32],
  operatingPoint: 32,
  durationMs: 1_500,
  warmupMs: 500,
  coldStartKeys: [5_000, 20_000],
  goodRate: 100,
  goodMs: 2_000,
  chaosMs: 10_000
}

const FULL: Plan = {
  keySpace: 20_000,
  workloads: WORKLOADS,
  points: [8, 32, 128, 384],
  operatingPoint: 32,
  durationMs: 6_000,
  warmupMs: 2_000,
  coldStartKeys: [100_000, 1_000_000],
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
    /** Unmeasured load first (a run of its own), as long as the AirDB runs' warm-up. */
    readonly warmupMs?: number
  }
): Promise<{
  readonly throughput: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
}> => {
  if (o.warmupMs !== undefined && o.warmupMs > 0) {
    await etcdYcsb(binary, endpoints, { ...o, durationMs: o.warmupMs, warmupMs: 0, prefill: false })
  }
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
  const started = readMachine()
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

    // ---- 1. p99 against throughput: every curve whole, one run per point --------------------------------------
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
    console.log(`\nbench airdb: p99 against throughput (YCSB, 1 KB values; ${plan.workloads.join(", ")})`)
    const etcd = await startEtcdCluster({ n: 3, extraArgs: ["--quota-backend-bytes", String(8 * 1024 ** 3)] })
    etcdClusters.push(etcd)
    const etcdRun = (workload: Workload, concurrency: number, extra: Partial<Parameters<typeof etcdYcsb>[2]> = {}) =>
      etcdYcsb(etcdload, etcd.endpoints, {
        workload,
        concurrency,
        durationMs: plan.durationMs,
        warmupMs: plan.warmupMs,
        keySpace: plan.keySpace,
        ...extra
      })
    const airdbJs = airdb(storages.jetstream, "y_airdb_jetstream")
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
      for (const workload of plan.workloads) {
        for (const c of plan.points) {
          record(
            system,
            workload,
            c,
            system === "etcd" ? await etcdRun(workload, c) : await twoClients(target, workload, c)
          )
        }
      }
      if (system === "slsmr") for (const s of children.splice(0)) await s.kill()
    }
    // The slow-storage point: AirDB on Azure Append Blobs (Azurite).
    const azureTarget = airdb(storages.azure, "y_azure")
    await fill(azureTarget, 0, plan.keySpace)
    for (const workload of plan.workloads) {
      record("airdb-azurite", workload, 16, await twoClients(azureTarget, workload, 16))
    }

    // ---- 1b. the headline: read-heavy at one stated concurrency, AirDB and etcd in interleaved rounds -------
    const c = plan.operatingPoint
    console.log(`\nbench airdb: read-heavy at ${c} in flight, AirDB (JetStream) and etcd interleaved`)
    const readHeavy = await interleave(
      { quick, label: `airdb read-heavy c=${c}` },
      { airdb: () => twoClients(airdbJs, "read-heavy", c), etcd: () => etcdRun("read-heavy", c) }
    )

    // ---- 2. cold start: the same number of runs on every side, interleaved --------------------------------------
    console.log("\nbench airdb: cold start (process start to first committed transaction)")
    const sizes = await Promise.all(
      plan.coldStartKeys.map(async (keys) => ({ keys, mb: Math.round((keys * VALUE_BYTES) / 1024 ** 2) }))
    )
    const prepared: Array<{ keys: number; mb: number; target: LoadTarget; storage: StorageOptions; snapshot: string }> =
      []
    const snapshotDir = mkdtempSync(join(tmpdir(), "reef-airdb-etcdsnap-"))
    for (const { keys, mb } of sizes) {
      // A JetStream server of its own per size (in the run's scope).
      const coldNats = await inScope(startNatsServer({ jetstream: true }))
      const storage: StorageOptions = { backend: "jetstream", natsUrl: coldNats.url }
      const target = airdb(storage, `cs_${keys}`)
      const filled = Date.now()
      await fill(target, 0, keys)
      console.log(`  ${mb} MB loaded into AirDB in ${round((Date.now() - filled) / 1000, 1)} s`)
      // etcd: the same keys, snapshotted once; every etcd run restores three members from it.
      const source = await startEtcdCluster({ n: 3, extraArgs: ["--quota-backend-bytes", String(8 * 1024 ** 3)] })
      etcdClusters.push(source)
      await etcdYcsb(etcdload, source.endpoints, {
        workload: "read-only",
        concurrency: 16,
        durationMs: 0,
        keySpace: keys,
        prefill: true
      })
      const snapshot = join(snapshotDir, `snapshot-${keys}.db`)
      await saveEtcdSnapshot(source.endpoints[0]!, snapshot)
      await source.stop()
      prepared.push({ keys, mb, target, storage, snapshot })
    }
    type ColdRun = { ms: number; openMs?: number; loadMs?: number; stats?: Record<string, number> }
    const airdbCold = (target: LoadTarget) => async (): Promise<ColdRun> => {
      const r = await startChild<{ coldStartMs: number; openMs: number; clientStats: Record<string, number> }>(
        "load-process",
        { mode: "coldstart", target, spawnedAt: Date.now() }
      ).first
      return { ms: r.coldStartMs, openMs: r.openMs, stats: r.clientStats }
    }
    // SLSMR: one server downloads the whole state, then serves; the first transaction comes from this (running)
    // process, as etcd's comes from a running etcdctl.
    const slsmrCold = (storage: StorageOptions, store: string) => async (): Promise<ColdRun> => {
      const spawnedAt = Date.now()
      const server = startChild<{ address: string; loadMs: number }>(
        "server-process",
        { storage, store, id: "cold" },
        { heapMb: 12_288 }
      )
      children.push(server)
      try {
        const ready = await server.first
        await grpcPut(ready.address, `coldstart-${Date.now()}`)
        return { ms: Date.now() - spawnedAt, loadMs: ready.loadMs }
      } finally {
        await server.kill()
        children.splice(children.indexOf(server), 1)
      }
    }
    const etcdCold = (snapshot: string) => async (): Promise<ColdRun> => ({ ms: await etcdColdStartMs(snapshot) })
    const [small, large] = prepared as [(typeof prepared)[number], (typeof prepared)[number]]
    const coldRounds = await interleave(
      { quick, label: "airdb cold start" },
      {
        airdbSmall: airdbCold(small.target),
        slsmrSmall: slsmrCold(small.storage, `cs_${small.keys}`),
        etcdSmall: etcdCold(small.snapshot),
        airdbLarge: airdbCold(large.target),
        slsmrLarge: slsmrCold(large.storage, `cs_${large.keys}`),
        etcdLarge: etcdCold(large.snapshot)
      }
    )
    rmSync(snapshotDir, { recursive: true, force: true })

    // ---- 3. a good client, then bad clients, interleaved with etcd ---------------------------------------------
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
    type Isolation = { beforeP99Ms: number; readFloodP99Ms: number; updateFloodP99Ms: number }
    const airdbIsolation = async (): Promise<Isolation> => {
      const before = await runLoad(good(airdbJs))
      const during = async (flood: Workload) => {
        // Bad clients run at nice 19 on both sides: what they do to the good client goes through the system,
        // not this 2-core machine's shared CPU.
        const bad = [0, 1].map((i) =>
          startChild<LoadOutput>(
            "load-process",
            { ...loadSpec(airdbJs, flood, 64, i + 4), durationMs: plan.goodMs + 3_000, warmupMs: 0 },
            { nice: 19 }
          )
        )
        await sleep(1_000)
        const r = await runLoad(good(airdbJs))
        await Promise.all(bad.map((b) => b.first))
        return r.p99Ms
      }
      return {
        beforeP99Ms: before.p99Ms,
        readFloodP99Ms: await during("read-heavy"),
        updateFloodP99Ms: await during("update-heavy")
      }
    }
    const etcdIsolation = async (): Promise<Isolation> => {
      const goodEtcd = () =>
        etcdYcsb(etcdload, etcd.endpoints, {
          workload: "read-only",
          concurrency: 4,
          durationMs: plan.goodMs,
          warmupMs: 500,
          keySpace: plan.keySpace,
          rate: plan.goodRate
        })
      const before = await goodEtcd()
      const during = async (flood: Workload) => {
        const bad = etcdYcsb(etcdload, etcd.endpoints, {
          workload: flood,
          concurrency: 128,
          durationMs: plan.goodMs + 3_000,
          keySpace: plan.keySpace,
          nice: true
        })
        await sleep(1_000)
        const r = await goodEtcd()
        await bad
        return r.p99Ms
      }
      return {
        beforeP99Ms: before.p99Ms,
        readFloodP99Ms: await during("read-heavy"),
        updateFloodP99Ms: await during("update-heavy")
      }
    }
    const isolation = await interleave(
      { quick, label: "airdb isolation" },
      { airdb: airdbIsolation, etcd: etcdIsolation }
    )

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
    const ycsb = {
      valueBytes: VALUE_BYTES,
      keySpace: plan.keySpace,
      warmUpMs: plan.warmupMs,
      durationMs: plan.durationMs,
      consistency: "strict serializable (AirDB transactions; etcd linearizable reads)",
      clients: "AirDB: two Node client processes, histograms merged; etcd: its Go clientv3 (etcdload)"
    }
    const coldConditions = (size: (typeof prepared)[number]) => ({
      state: `${size.keys.toLocaleString("en")} keys of ${VALUE_BYTES} B (${size.mb} MB)`,
      clock: "process spawn to first committed transaction",
      airdb: "a new client process opens the store (indexes and tail) and commits",
      slsmr: "a new server process downloads the whole state from JetStream, then serves a put",
      etcd: "etcdctl snapshot restore of 3 members from one snapshot, start, first put (--unsafe-no-fsync)"
    })
    const isolationConditions = {
      goodClient: `read-only, 4 workers paced to ${plan.goodRate}/s for ${plan.goodMs} ms`,
      badClients: "64 (AirDB: two processes of 64) / 128 (etcd) in flight, nice 19 on both",
      latencies: "p99 from one merged histogram per run"
    }
    const ratios = {
      readHeavyThroughputVsEtcd: ratioOf(
        {
          numerator: `AirDB on JetStream, YCSB read-heavy, ${c} in flight (ops/s)`,
          denominator: `etcd (3 members), YCSB read-heavy, ${c} in flight (ops/s)`,
          conditions: ycsb,
          operatingPoint: `${c} operations in flight on both (the curves: airdb-read-heavy plot)`
        },
        readHeavy,
        (v) => v.airdb.throughput,
        (v) => v.etcd.throughput
      ),
      readHeavyP99VsEtcd: ratioOf(
        {
          numerator: `AirDB on JetStream, YCSB read-heavy, ${c} in flight: p99 (ms)`,
          denominator: `etcd, YCSB read-heavy, ${c} in flight: p99 (ms)`,
          conditions: ycsb,
          operatingPoint: `${c} operations in flight on both`
        },
        readHeavy,
        (v) => v.airdb.p99Ms,
        (v) => v.etcd.p99Ms
      ),
      coldStartLargeSlsmrOverAirdb: ratioOf(
        { numerator: "SLSMR cold start (ms)", denominator: "AirDB cold start (ms)", conditions: coldConditions(large) },
        coldRounds,
        (v) => v.slsmrLarge.ms,
        (v) => v.airdbLarge.ms
      ),
      coldStartLargeEtcdOverAirdb: ratioOf(
        {
          numerator: "etcd restore cold start (ms)",
          denominator: "AirDB cold start (ms)",
          conditions: coldConditions(large)
        },
        coldRounds,
        (v) => v.etcdLarge.ms,
        (v) => v.airdbLarge.ms
      ),
      coldStartLargeSlsmrOverEtcd: ratioOf(
        {
          numerator: "SLSMR cold start (ms)",
          denominator: "etcd snapshot-restore cold start (ms)",
          conditions: coldConditions(large),
          note: "our SLSMR baseline checked against a real peer that also restores the whole state"
        },
        coldRounds,
        (v) => v.slsmrLarge.ms,
        (v) => v.etcdLarge.ms
      ),
      coldStartLargeOverSmallAirdb: ratioOf(
        {
          numerator: `AirDB cold start, ${large.mb} MB (ms)`,
          denominator: `AirDB cold start, ${small.mb} MB (ms)`,
          conditions: {
            clock: "process spawn to first committed transaction",
            sizes: `${small.mb} MB and ${large.mb} MB`
          }
        },
        coldRounds,
        (v) => v.airdbLarge.ms,
        (v) => v.airdbSmall.ms
      ),
      goodClientP99InflationAirdbReadFlood: ratioOf(
        {
          numerator: "good client p99 while bad clients flood read-heavy (ms)",
          denominator: "good client p99 before (ms)",
          conditions: { ...isolationConditions, system: "AirDB on JetStream" }
        },
        isolation,
        (v) => v.airdb.readFloodP99Ms,
        (v) => v.airdb.beforeP99Ms
      ),
      goodClientP99InflationAirdbUpdateFlood: ratioOf(
        {
          numerator: "good client p99 while bad clients flood update-heavy (ms)",
          denominator: "good client p99 before (ms)",
          conditions: { ...isolationConditions, system: "AirDB on JetStream" }
        },
        isolation,
        (v) => v.airdb.updateFloodP99Ms,
        (v) => v.airdb.beforeP99Ms
      ),
      goodClientP99InflationEtcdReadFlood: ratioOf(
        {
          numerator: "good client p99 while bad clients flood read-heavy (ms)",
          denominator: "good client p99 before (ms)",
          conditions: { ...isolationConditions, system: "etcd, 3 members" }
        },
        isolation,
        (v) => v.etcd.readFloodP99Ms,
        (v) => v.etcd.beforeP99Ms
      ),
      goodClientP99InflationEtcdUpdateFlood: ratioOf(
        {
          numerator: "good client p99 while bad clients flood update-heavy (ms)",
          denominator: "good client p99 before (ms)",
          conditions: { ...isolationConditions, system: "etcd, 3 members" }
        },
        isolation,
        (v) => v.etcd.updateFloodP99Ms,
        (v) => v.etcd.beforeP99Ms
      )
    }
    const cold = Object.fromEntries(
      prepared.map((size, i) => {
        const suffix = i === 0 ? "Small" : "Large"
        const fig = (side: "airdb" | "slsmr" | "etcd") =>
          figureOf(coldRounds, (v) => (v[`${side}${suffix}` as keyof typeof v] as ColdRun).ms)
        const lastAirdb = coldRounds[coldRounds.length - 1]!.values[`airdb${suffix}` as "airdbSmall"]
        return [
          `${size.mb}MB`,
          {
            keys: size.keys,
            airdbMs: fig("airdb"),
            slsmrMs: fig("slsmr"),
            etcdMs: fig("etcd"),
            airdbOpenMs: figureOf(coldRounds, (v) => (v[`airdb${suffix}` as "airdbSmall"] as ColdRun).openMs ?? 0),
            slsmrLoadMs: figureOf(coldRounds, (v) => (v[`slsmr${suffix}` as "slsmrSmall"] as ColdRun).loadMs ?? 0),
            airdbIndexBytes: lastAirdb.stats?.indexBytes ?? 0,
            airdbLogEntries: lastAirdb.stats?.entries ?? 0,
            airdbReplayedEntries: (lastAirdb.stats?.entries ?? 0) - (lastAirdb.stats?.chainEnd ?? 0)
          }
        ]
      })
    )
    const systems = [...new Set(points.map((p) => p.system))]
    const curves = Object.fromEntries(
      plan.workloads.map((workload) => [
        workload,
        {
          title: `AirDB bench, YCSB ${workload}: p99 latency against throughput (one run per point)`,
          x: { title: "throughput (operations/s)", format: "~s" },
          y: { title: "p99 latency (ms)", scale: "log" as const },
          ...(workload === "read-heavy"
            ? { headline: `read-heavy at ${c} in flight, interleaved rounds (readHeavyThroughputVsEtcd)` }
            : {}),
          points: systems.flatMap((system) =>
            points
              .filter((p) => p.system === system && p.workload === workload)
              .map((p) => ({ series: system, x: round(p.throughput, 0), y: round(p.p99Ms, 2) }))
          )
        } satisfies Curve
      ])
    )
    const perSecond = chaos.timeline100ms.reduce<Array<number>>((acc, n, i) => {
      acc[Math.floor(i / 10)] = (acc[Math.floor(i / 10)] ?? 0) + n
      return acc
    }, [])
    const path = await writeResult({
      suite: "airdb",
      quick,
      command: `pnpm bench airdb${quick ? " --quick" : ""}`,
      machine: machineNow(started),
      ratios,
      metrics: {
        plan: { ...plan },
        curves: Object.fromEntries(points.map((p) => [`${p.system}/${p.workload}/c${p.concurrency}`, { ...p }])),
        readHeavyAtOperatingPoint: {
          concurrency: c,
          airdbPerSec: figureOf(readHeavy, (v) => v.airdb.throughput),
          etcdPerSec: figureOf(readHeavy, (v) => v.etcd.throughput),
          airdbP99Ms: figureOf(readHeavy, (v) => v.airdb.p99Ms),
          etcdP99Ms: figureOf(readHeavy, (v) => v.etcd.p99Ms)
        },
        coldStart: cold,
        isolation: isolation.map((r) => r.values),
        chaos: {
          reads: attempted,
          withinSlaPct: pct(chaos.withinSla),
          latePct: pct(chaos.late),
          unreachablePct: pct(chaos.unreachable),
          p99Ms: chaos.p99Ms,
          events,
          throughputPerSecond: perSecond
        }
      },
      curves: {
        ...curves,
        chaos: {
          title:
            "AirDB chaos: the good client's reads per second (client kills, bad-client bursts, 0.1% failing storage calls)",
          x: { title: "time (s)" },
          y: { title: "reads per second" },
          points: perSecond.map((n, i) => ({ series: "good client", x: i, y: n }))
        }
      }
    })
    printTable(
      `AirDB: read-heavy at ${c} in flight, interleaved rounds`,
      ["round", "AirDB ops/s", "etcd ops/s", "AirDB p99", "etcd p99"],
      readHeavy.map((r, i) => [
        i + 1,
        r.values.airdb.throughput,
        r.values.etcd.throughput,
        r.values.airdb.p99Ms,
        r.values.etcd.p99Ms
      ])
    )
    printTable(
      "Cold start (ms, process start to first commit): median and min–max over rounds",
      ["size", "AirDB", "SLSMR", "etcd"],
      Object.entries(cold).map(([size, x]) => [
        size,
        `${x.airdbMs.median} (${x.airdbMs.min}–${x.airdbMs.max})`,
        `${x.slsmrMs.median} (${x.slsmrMs.min}–${x.slsmrMs.max})`,
        `${x.etcdMs.median} (${x.etcdMs.min}–${x.etcdMs.max})`
      ])
    )
    printTable(
      "Ratios (median and min–max over interleaved rounds)",
      ["ratio", "median", "min", "max"],
      Object.entries(ratios).map(([n, r]) => [n, r.median, r.min, r.max])
    )
    console.log(`wrote ${path}`)
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    await cleanUp()
  }
}
