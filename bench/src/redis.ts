/**
 * `pnpm bench redis [--quick]`: the POPUC paper's §6 evaluation (Fig. 8) with the official tool. Reef-Redis
 * (`reef run replica --app redis`: each replica fronts its own redis-server, writes ordered by POPUC, GETs behind
 * a read barrier) at N = 3 and 5, driven by `redis-benchmark -t set,get -c 50 -d 256` with pipelining 1 and 16,
 * against an un-replicated redis-server driven the same way, and against etcd at the same N (its own Go client,
 * bench/go/etcdload: PUT and linearizable GET, 50 and 800 requests in flight: redis-benchmark's 50 connections ×
 * pipelining 1 and 16). Every contender of one size is measured in the same interleaved rounds (the harness's
 * A B C, A B C), reported as median and min–max.
 *
 * And native ZooKeeper at the same N (Debian's package; its own Java client: setData, and sync + getData for a
 * consistent read; bench/src/peers/zookeeper.ts), with the same requests in flight as etcd.
 * Not measured: N = 9 (nine replica processes and nine JVMs do not fit this 2-core machine's memory or time).
 */
import type { ChildProcess } from "node:child_process"
import { startReefChild, stopTogetherOnClose } from "@reef/devkit"
import { freePort, startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import {
  figureOf,
  interleave,
  machineNow,
  type Ratio,
  type Round,
  ratioOf,
  readMachine,
  writeResult
} from "./harness/index.js"
import type { CurvePoint } from "./harness/plot.js"
import {
  buildEtcdLoad,
  etcdLoadAvailable,
  runEtcdLoad,
  runRedisLoad,
  runZkLoad,
  startEtcdCluster,
  startRedis,
  startZooKeeperEnsemble,
  type ZooKeeperEnsemble,
  zookeeperAvailable
} from "./peers/index.js"

const CONCURRENCY = 50
const VALUE_BYTES = 256
const KEY_SPACE = 1_000
const PIPELINES = [1, 16] as const
const SIZES = [3, 5] as const

interface Rates {
  readonly set1: number
  readonly get1: number
  readonly set16: number
  readonly get16: number
}

/** Requests per redis-benchmark run: about a second or two of each contender on this machine. */
const requestsFor = (quick: boolean, pipeline: number, replicated: boolean) =>
  (replicated ? 1 : 10) * (pipeline === 1 ? 1 : 8) * (quick ? 2_000 : 5_000)

/** redis-benchmark SET then GET (the GETs hit the keys just set), at pipelining 1 and 16. */
const redisBenchmark = async (port: number, quick: boolean, replicated: boolean): Promise<Rates> => {
  const rates: Record<string, number> = {}
  for (const pipeline of PIPELINES) {
    for (const op of ["set", "get"] as const) {
      const result = await runRedisLoad({
        port,
        op,
        concurrency: CONCURRENCY,
        requests: requestsFor(quick, pipeline, replicated),
        valueSize: VALUE_BYTES,
        keySpace: KEY_SPACE,
        pipeline
      })
      rates[`${op}${pipeline}`] = result.throughputPerSec
    }
  }
  return rates as unknown as Rates
}

/** A Reef-Redis group of `n` replica processes (`--app redis`), in the current scope; their RESP ports. */
const startReefRedis = (natsUrl: string, n: number) =>
  Effect.gen(function* () {
    const ids = Array.from({ length: n }, (_, i) => `r${i + 1}`)
    const respPorts = yield* Effect.forEach(ids, () => freePort)
    const children: Array<ChildProcess> = yield* Effect.forEach(
      ids,
      (id, i) =>
        startReefChild({
          name: `redis${n}/${id}`,
          args: [
            ...["run", "replica", "--id", id, "--nats", natsUrl, "--cluster", "benchredis", "--group", `redis${n}`],
            ...["--members", ids.join(","), "--kv-port", "0", "--resp-port", String(respPorts[i]), "--app", "redis"]
          ],
          env: { OTEL_SDK_DISABLED: "true" },
          startTimeoutMs: 90_000,
          onLine: (line) => {
            if (line.includes("self-quit") || line.includes("ERROR") || line.startsWith("reef:")) {
              console.log(`  [redis${n}/${id}] ${line}`)
            }
          }
        }),
      { concurrency: "unbounded" }
    )
    yield* stopTogetherOnClose(children)
    return respPorts
  })

const inScope = async <A>(effect: Effect.Effect<A, unknown, Scope.Scope>) => {
  const scope = Effect.runSync(Scope.make())
  const value = await Effect.runPromise(Scope.extend(effect, scope))
  return { value, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** etcd's four rates; NaN for the ones whose run failed (a loaded machine can time out its prefill). */
const etcdRates = async (
  cluster: Parameters<typeof runEtcdLoad>[0],
  quick: boolean,
  failures: Array<string>
): Promise<Rates> => {
  const durationMs = quick ? 1_200 : 2_500
  const rate = async (op: "put" | "get", inFlight: number) => {
    try {
      const load = { op, concurrency: inFlight, durationMs, valueSize: VALUE_BYTES, keySpace: KEY_SPACE }
      return (await runEtcdLoad(cluster, load)).throughputPerSec
    } catch (error) {
      failures.push(`etcd ${op} ${inFlight} in flight: ${(error as Error).message.split("\n")[0]}`)
      return Number.NaN
    }
  }
  return {
    set1: await rate("put", CONCURRENCY),
    get1: await rate("get", CONCURRENCY),
    set16: await rate("put", CONCURRENCY * 16),
    get16: await rate("get", CONCURRENCY * 16)
  }
}

/** ZooKeeper's four rates from one client run (SET and consistent GET at 50 and 800 in flight). */
const zkRates = async (ensemble: ZooKeeperEnsemble, quick: boolean, failures: Array<string>): Promise<Rates> => {
  try {
    const [set1, get1, set16, get16] = await runZkLoad(ensemble, {
      phases: [
        { op: "set", inFlight: CONCURRENCY },
        { op: "get", inFlight: CONCURRENCY },
        { op: "set", inFlight: CONCURRENCY * 16 },
        { op: "get", inFlight: CONCURRENCY * 16 }
      ],
      durationMs: quick ? 1_200 : 2_500,
      valueBytes: VALUE_BYTES,
      keys: KEY_SPACE
    })
    return { set1: set1!, get1: get1!, set16: set16!, get16: get16! }
  } catch (error) {
    failures.push(`ZooKeeper: ${(error as Error).message.split("\n")[0]}`)
    return { set1: Number.NaN, get1: Number.NaN, set16: Number.NaN, get16: Number.NaN }
  }
}

const OPS = [
  ["set1", "SET", 1],
  ["get1", "GET", 1],
  ["set16", "SET", 16],
  ["get16", "GET", 16]
] as const

export const run = async (quick: boolean) => {
  const start = readMachine()
  const ratios: Record<string, Ratio> = {}
  const figures: Record<string, unknown> = {}
  const points: Array<CurvePoint> = []
  const failures: Array<string> = []
  const withEtcd =
    etcdLoadAvailable() ||
    (await buildEtcdLoad({ install: false }).then(
      () => true,
      () => false
    ))
  if (!withEtcd) console.log("etcd load generator unavailable (REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh): no etcd")
  const withZk = zookeeperAvailable()
  if (!withZk) console.log("ZooKeeper or javac missing (REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh): no ZooKeeper")

  const nats = await inScope(startNatsServer({ jetstream: false }))
  const redis = await startRedis()
  try {
    for (const n of SIZES) {
      console.log(`Reef-Redis N = ${n}${withEtcd ? `, etcd N = ${n}` : ""} and un-replicated Redis, interleaved`)
      const group = await inScope(startReefRedis(nats.value.url, n))
      const etcd = withEtcd ? await startEtcdCluster({ n, unsafeNoFsync: true }) : undefined
      const zk = withZk
        ? await startZooKeeperEnsemble(n).catch((error: Error) => {
            failures.push(`ZooKeeper N = ${n}: ${error.message}`)
            return undefined
          })
        : undefined
      try {
        const contenders = {
          reef: () => redisBenchmark(group.value[0]!, quick, true),
          redis: () => redisBenchmark(redis.port, quick, false),
          ...(etcd === undefined ? {} : { etcd: () => etcdRates(etcd, quick, failures) }),
          ...(zk === undefined ? {} : { zookeeper: () => zkRates(zk, quick, failures) })
        }
        // --quick: no reruns of busy rounds (they are still marked), to stay within a few minutes.
        const options = { quick, label: `redis N=${n}`, ...(quick ? { maxRerunsPerRound: 0 } : {}) }
        const rounds = (await interleave(options, contenders)) as ReadonlyArray<Round<Record<string, Rates>>>
        for (const [key, op, pipeline] of OPS) {
          const conditions = {
            client: "redis-benchmark",
            connections: CONCURRENCY,
            pipeline,
            valueBytes: VALUE_BYTES,
            keySpace: KEY_SPACE,
            consistentReads: true,
            persistence: "none (in-memory on every side)"
          }
          ratios[`reefRedisN${n}Over${op === "SET" ? "Set" : "Get"}P${pipeline}UnreplicatedRedis`] = ratioOf(
            {
              numerator: `Reef-Redis N = ${n} ${op}, -c ${CONCURRENCY} -P ${pipeline} (/s)`,
              denominator: `un-replicated redis-server ${op}, -c ${CONCURRENCY} -P ${pipeline} (/s)`,
              conditions
            },
            rounds,
            (v) => v.reef![key],
            (v) => v.redis![key]
          )
          if (etcd !== undefined && rounds.every((r) => Number.isFinite(r.values.etcd![key]))) {
            ratios[`reefRedisN${n}OverEtcd${op === "SET" ? "Put" : "Get"}${CONCURRENCY * pipeline}InFlight`] = ratioOf(
              {
                numerator: `Reef-Redis N = ${n} ${op}, ${CONCURRENCY * pipeline} in flight (redis-benchmark) (/s)`,
                denominator: `etcd N = ${n} ${op === "SET" ? "PUT" : "linearizable GET"}, ${CONCURRENCY * pipeline} in flight (Go clientv3) (/s)`,
                conditions: {
                  inFlight: CONCURRENCY * pipeline,
                  valueBytes: VALUE_BYTES,
                  keySpace: KEY_SPACE,
                  consistentReads: true,
                  durability: "none: Reef in memory, etcd --unsafe-no-fsync"
                },
                note: "different clients (redis-benchmark vs etcd's Go client), same requests in flight"
              },
              rounds,
              (v) => v.reef![key],
              (v) => v.etcd![key]
            )
          }
          if (zk !== undefined && rounds.every((r) => Number.isFinite(r.values.zookeeper![key]))) {
            ratios[`reefRedisN${n}OverZooKeeper${op === "SET" ? "Set" : "Get"}${CONCURRENCY * pipeline}InFlight`] =
              ratioOf(
                {
                  numerator: `Reef-Redis N = ${n} ${op}, ${CONCURRENCY * pipeline} in flight (redis-benchmark) (/s)`,
                  denominator: `ZooKeeper N = ${n} ${op === "SET" ? "setData" : "sync + getData"}, ${CONCURRENCY * pipeline} in flight (Java client) (/s)`,
                  conditions: {
                    inFlight: CONCURRENCY * pipeline,
                    valueBytes: VALUE_BYTES,
                    keySpace: KEY_SPACE,
                    consistentReads: true,
                    durability: "none: Reef in memory, ZooKeeper forceSync=no"
                  },
                  note: "different clients (redis-benchmark vs ZooKeeper's Java client), same requests in flight"
                },
                rounds,
                (v) => v.reef![key],
                (v) => v.zookeeper![key]
              )
          }
          for (const series of Object.keys(contenders)) {
            if (!rounds.every((r) => Number.isFinite(r.values[series]![key]))) continue
            const figure = figureOf(rounds, (v) => v[series]![key])
            figures[`${series}N${n}${key}`] = figure
            const labels: Record<string, string> = {
              reef: "Reef-Redis",
              redis: "redis-server (1 node)",
              etcd: "etcd",
              zookeeper: "ZooKeeper"
            }
            const label = labels[series] ?? series
            if (series !== "redis" || n === SIZES[0]) {
              points.push({
                series: `${label} ${op} P${pipeline}`,
                x: series === "redis" ? 1 : n,
                y: figure.median,
                yMin: figure.min,
                yMax: figure.max
              })
            }
          }
        }
      } finally {
        await etcd?.stop()
        await zk?.stop()
        await group.close()
      }
    }
  } finally {
    await redis.stop()
    await nats.close()
  }

  for (const [name, r] of Object.entries(ratios)) {
    console.log(`${name}: ${r.median.toFixed(3)} (${r.min.toFixed(3)}-${r.max.toFixed(3)})`)
  }
  await writeResult({
    suite: "redis",
    quick,
    command: `pnpm bench redis${quick ? " --quick" : ""}`,
    machine: machineNow(start),
    ratios,
    curves: {
      throughput: {
        title: "SET and consistent GET, 256 B: Reef-Redis, etcd, ZooKeeper and one redis-server",
        x: { title: "replicas (N)" },
        y: { title: "requests (/s)", scale: "log" },
        points,
        headline: "-c 50, pipelining 1 and 16"
      }
    },
    metrics: {
      figures,
      failures,
      conditions: { concurrency: CONCURRENCY, valueBytes: VALUE_BYTES, keySpace: KEY_SPACE }
    }
  })
}
