/**
 * The peers, in the same run on the same machine. etcd (loopback, etcd's own Go client, --unsafe-no-fsync since
 * POPUC keeps state in memory): one round of it per interleaved round of the suite, a fresh cluster per group
 * size warmed with `plan.warmUpMs` of writes as Reef's groups are, then PUT and GET at the same concurrency; at
 * N = 5 its peak with as many writes in flight as Reef's saturation run and a leader kill under load, with its
 * default raft timing and again tuned to loopback scale. An unreplicated Redis as a reference line.
 */
import {
  buildEtcdLoad,
  etcdLoadAvailable,
  type LoadResult,
  runEtcdLoad,
  runRedisLoad,
  startEtcdCluster,
  startRedis
} from "../peers/index.js"
import { round } from "../report.js"
import { type CostSample, etcdCostWindow } from "./cost.js"
import { type FailoverRun, killEtcdLeader } from "./failover.js"
import type { LoadFigures } from "./group-sizes.js"
import type { Plan } from "./plan.js"

const figures = (r: LoadResult): LoadFigures => ({
  perSec: round(r.throughputPerSec, 0),
  p50Ms: round(r.p50Ms),
  p99Ms: round(r.p99Ms),
  errors: r.errors,
  clientCpuCores: round(r.clientCpuSeconds / r.seconds)
})

export interface EtcdSize {
  readonly n: number
  readonly put: LoadFigures
  readonly get: LoadFigures
  /** CPU per committed write over the PUT window (cost.ts). */
  readonly cost: CostSample
  readonly saturated?: LoadFigures
  readonly failover?: FailoverRun
}

export interface EtcdRound {
  readonly sizes: ReadonlyArray<EtcdSize>
  /** N = 5 with raft timing tuned to loopback scale: PUT throughput and the leader-kill failover. */
  readonly tuned: { readonly put: LoadFigures; readonly failover: FailoverRun }
}

/** Builds (or finds) the Go load generator before the first round, so no round pays for the build. */
export const ensureEtcdLoad = async () => {
  if (!etcdLoadAvailable()) console.log("  building etcdload (Go, offline)")
  await buildEtcdLoad({ install: true })
}

/** The etcd side of one round. */
export const etcdRound = async (plan: Plan): Promise<EtcdRound> => {
  const sizes: Array<EtcdSize> = []
  for (const n of plan.etcdNs) {
    const cluster = await startEtcdCluster({ n, unsafeNoFsync: true })
    try {
      await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.warmUpMs })
      const costWindow = await etcdCostWindow(cluster)
      const puts = await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.loadMs })
      const cost = await costWindow(puts)
      const put = figures(puts)
      const get = figures(
        await runEtcdLoad(cluster, { op: "get", concurrency: plan.concurrency, durationMs: plan.loadMs })
      )
      if (n !== 5) {
        sizes.push({ n, put, get, cost })
        continue
      }
      const saturated = figures(
        await runEtcdLoad(cluster, { op: "put", concurrency: plan.saturation, durationMs: plan.loadMs })
      )
      const failover = await killEtcdLeader(plan, cluster, plan.concurrency)
      sizes.push({ n, put, get, cost, saturated, failover })
    } finally {
      await cluster.stop()
    }
  }
  const tunedCluster = await startEtcdCluster({ n: 5, unsafeNoFsync: true, raftTiming: plan.etcdTunedRaft })
  try {
    await runEtcdLoad(tunedCluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.warmUpMs })
    const put = figures(
      await runEtcdLoad(tunedCluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.loadMs })
    )
    const failover = await killEtcdLeader(plan, tunedCluster, plan.concurrency)
    return { sizes, tuned: { put, failover } }
  } finally {
    await tunedCluster.stop()
  }
}

/** An unreplicated Redis (redis-benchmark, same concurrency): a reference line, not a ratio. */
export const measureRedis = async (plan: Plan, quick: boolean) => {
  const redis = await startRedis()
  try {
    const requests = quick ? 50_000 : 200_000
    const run = (op: "set" | "get") =>
      runRedisLoad({ port: redis.port, op, concurrency: plan.concurrency, requests, serverPid: redis.pid })
    const set = await run("set")
    const get = await run("get")
    return {
      setPerSec: round(set.throughputPerSec, 0),
      getPerSec: round(get.throughputPerSec, 0),
      setP50Ms: round(set.p50Ms),
      setP99Ms: round(set.p99Ms)
    }
  } finally {
    await redis.stop()
  }
}
