/**
 * The peers, in the same run on the same machine: etcd at each N (loopback, Go client, --unsafe-no-fsync since
 * POPUC keeps state in memory), its peak with as many writes in flight as the saturation run, and a leader
 * kill under load; an unreplicated Redis.
 */
import {
  buildEtcdLoad,
  etcdLoadAvailable,
  longestStallMs,
  runEtcdLoad,
  runRedisLoad,
  startEtcdCluster,
  startRedis
} from "../peers/index.js"
import { round } from "../report.js"
import type { Plan } from "./plan.js"

export interface EtcdRun {
  readonly put: number
  readonly get: number
  readonly putP50: number
  readonly putP99: number
  readonly clientCores: number
}

export const measurePeers = async (plan: Plan, quick: boolean) => {
  let saturated: Record<string, number> = {}
  const etcd: Record<number, EtcdRun> = {}
  let etcdStallMs = Number.NaN
  if (!etcdLoadAvailable()) await buildEtcdLoad({ install: true })
  for (const n of plan.etcdNs) {
    const cluster = await startEtcdCluster({ n, unsafeNoFsync: true })
    try {
      const put = await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.loadMs })
      const get = await runEtcdLoad(cluster, { op: "get", concurrency: plan.concurrency, durationMs: plan.loadMs })
      etcd[n] = {
        put: put.throughputPerSec,
        get: get.throughputPerSec,
        putP50: put.p50Ms,
        putP99: put.p99Ms,
        clientCores: round(put.clientCpuSeconds / put.seconds)
      }
      if (n === 5) {
        const peak = await runEtcdLoad(cluster, { op: "put", concurrency: plan.saturation, durationMs: plan.loadMs })
        saturated = {
          etcdPutPerSec: round(peak.throughputPerSec, 0),
          etcdPutP50Ms: round(peak.p50Ms),
          etcdPutP99Ms: round(peak.p99Ms),
          etcdClientCpuCores: round(peak.clientCpuSeconds / peak.seconds)
        }
        const leader = await cluster.leader()
        const killAtMs = 2_000
        setTimeout(() => void cluster.kill(leader.name), killAtMs)
        const load = await runEtcdLoad(cluster, {
          op: "put",
          concurrency: plan.concurrency,
          durationMs: killAtMs + 5_000
        })
        etcdStallMs = load.maxGapMs ?? longestStallMs(load.timeline100ms)
      }
    } finally {
      await cluster.stop()
    }
  }
  const redis = await startRedis()
  const redisRequests = quick ? 50_000 : 200_000
  const redisSet = await runRedisLoad({
    port: redis.port,
    op: "set",
    concurrency: plan.concurrency,
    requests: redisRequests,
    serverPid: redis.pid
  })
  const redisGet = await runRedisLoad({
    port: redis.port,
    op: "get",
    concurrency: plan.concurrency,
    requests: redisRequests,
    serverPid: redis.pid
  })
  await redis.stop()

  return { etcd, etcdStallMs, saturated, redisSet, redisGet }
}
