/**
 * Cost per committed write, per process, per group size, with etcd in the same run: what decides throughput
 * on this 2-core machine (every replica shares it) and what one replica would need on a machine of its own.
 *
 * Interleaved rounds (bench/src/harness): in each, every N, every Reef variant and etcd in turn, each on a fresh
 * group (or cluster) with the same warm-up, then `loadMs` of writes at `concurrency` in flight (Reef colocated
 * SET, etcd PUT with its Go client), with counters read just before and after:
 *   - CPU seconds of every replica process, its engine thread (`reef-engine`) and the rest (host), of the
 *     nats-server, and of every etcd member (the leader told apart);
 *   - bytes each engine's NATS connection sent and received (nats-server /connz);
 *   - the whole machine's busy CPU, so what other processes took (the machine is shared) is reported too.
 * Everything is divided by the writes committed (acknowledged to the client) in that window.
 *
 * Reef variants are `reef run replica` argument lists (e.g. an old and a new wire format): they take turns
 * with each other and with etcd, so a drift of the machine's load hits them alike. Per-write CPU is only as
 * good as the machine is quiet: other processes' CPU (`otherCores`) and the load average are kept per window.
 */
import { loadavg } from "node:os"
import { freePort, startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { interleave, type Round } from "../harness/index.js"
import { type KvLoadResult, runKvLoad } from "../kv-load.js"
import {
  buildEtcdLoad,
  type EtcdCluster,
  etcdLoadAvailable,
  findEtcdBinary,
  type LoadResult,
  machineBusyCpuSeconds,
  runEtcdLoad,
  startEtcdCluster
} from "../peers/index.js"
import { procCpuSeconds } from "../peers/proc.js"
import { type Group, startGroup } from "../popuc-group.js"
import { round } from "../report.js"
import { connectionBytes, engineConnectionName, replicaCpu } from "./cost-probes.js"
import { engineSums } from "./plan.js"

export interface CostPlan {
  readonly ns: ReadonlyArray<number>
  readonly warmUpMs: number
  readonly loadMs: number
  readonly concurrency: number
  /**
   * Reef variants by name: extra `reef run replica` arguments, and another build's `reef` entry to run (a saved
   * bundle: the code before a change, measured in the same run as the code after it).
   */
  readonly variants: ReadonlyArray<{
    readonly name: string
    readonly args: ReadonlyArray<string>
    readonly entry?: string
  }>
  readonly etcd: boolean
}

/** One measured window of one system at one N. */
export interface CostSample {
  readonly writesPerSec: number
  readonly writes: number
  readonly errors: number
  /** Mean over replicas (members) of one process's CPU µs per committed write. */
  readonly replicaCpuUsPerWrite: number
  readonly replicaCpuUsPerWriteMax: number
  readonly engineCpuUsPerWrite?: number
  readonly hostCpuUsPerWrite?: number
  readonly natsCpuUsPerWrite?: number
  /**
   * Peer traffic of one replica per committed write, the mean over replicas: a Reef engine's NATS connection
   * (published, delivered), an etcd member's raft transport (sent, received).
   */
  readonly bytesSentPerWrite?: number
  readonly bytesReceivedPerWrite?: number
  /** NATS messages one engine published / was delivered, per committed write. */
  readonly msgsSentPerWrite?: number
  readonly msgsReceivedPerWrite?: number
  /** Instances decided per committed write (one engine's count). */
  readonly instancesPerWrite?: number
  readonly leaderCpuUsPerWrite?: number
  /** etcd: what the leader's raft transport sent per committed write (it replicates every entry). */
  readonly leaderBytesSentPerWrite?: number
  readonly followerCpuUsPerWrite?: number
  readonly clientCpuUsPerWrite: number
  /** Cores the rest of the machine (other processes) used during the window. */
  readonly otherCores: number
  readonly loadAverage1m: number
}

const loadAverage1m = (): number => round(loadavg()[0] ?? Number.NaN, 2)

const mean = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
const perWriteUs = (seconds: number, writes: number): number => round((seconds * 1e6) / Math.max(1, writes), 1)

/** The nats-server a cost window reads: its monitoring endpoint (/connz) and its process (CPU). */
export interface NatsProbe {
  readonly monitorUrl: string
  readonly pid: number | undefined
}

/** What a measured load reports that a cost window divides by. */
type LoadCounts = Pick<KvLoadResult, "ops" | "errors" | "throughputPerSec" | "clientCpuSeconds">

/**
 * Cost counters of a Reef group (`groupName`, as started by startGroup), read with `read` just before and just
 * after a load window; `sample` turns the two readings and the window's load into a CostSample.
 */
export const reefCostWindow = (group: Group, groupName: string, nats: NatsProbe) => {
  const pids = group.children.map((c) => c.pid ?? -1)
  const read = () =>
    Effect.flatMap(engineSums(group), (sums) =>
      Effect.promise(async () => ({
        instances: sums.instances,
        cpu: pids.map((pid) => replicaCpu(pid)),
        nats: nats.pid === undefined ? undefined : procCpuSeconds(nats.pid),
        bytes: await connectionBytes(nats.monitorUrl),
        busy: machineBusyCpuSeconds(),
        at: performance.now()
      }))
    )
  type Reading = Effect.Effect.Success<ReturnType<typeof read>>
  const sample = (before: Reading, after: Reading, sets: LoadCounts): CostSample => {
    const writes = sets.ops
    const total: Array<number> = []
    const engine: Array<number> = []
    const sent: Array<number> = []
    const received: Array<number> = []
    const msgsSent: Array<number> = []
    const msgsReceived: Array<number> = []
    group.ids.forEach((id, i) => {
      const b = before.cpu[i]
      const a = after.cpu[i]
      if (a !== undefined && b !== undefined) {
        total.push(a.total - b.total)
        engine.push(a.engine - b.engine)
      }
      const name = engineConnectionName(groupName, id)
      const bb = before.bytes.get(name)
      const ab = after.bytes.get(name)
      if (bb !== undefined && ab !== undefined) {
        sent.push(ab.sent - bb.sent)
        received.push(ab.received - bb.received)
        msgsSent.push(ab.msgsSent - bb.msgsSent)
        msgsReceived.push(ab.msgsReceived - bb.msgsReceived)
      }
    })
    const seconds = (after.at - before.at) / 1000
    const natsCpu = after.nats !== undefined && before.nats !== undefined ? after.nats - before.nats : Number.NaN
    const ownCpu = total.reduce((a, b) => a + b, 0) + natsCpu + sets.clientCpuSeconds
    const busy = after.busy !== undefined && before.busy !== undefined ? after.busy - before.busy : Number.NaN
    return {
      writesPerSec: round(sets.throughputPerSec, 0),
      writes,
      errors: sets.errors,
      replicaCpuUsPerWrite: perWriteUs(mean(total), writes),
      replicaCpuUsPerWriteMax: perWriteUs(Math.max(...total), writes),
      engineCpuUsPerWrite: perWriteUs(mean(engine), writes),
      hostCpuUsPerWrite: perWriteUs(mean(total) - mean(engine), writes),
      natsCpuUsPerWrite: perWriteUs(natsCpu, writes),
      bytesSentPerWrite: round(mean(sent) / Math.max(1, writes), 1),
      bytesReceivedPerWrite: round(mean(received) / Math.max(1, writes), 1),
      msgsSentPerWrite: round(mean(msgsSent) / Math.max(1, writes), 3),
      msgsReceivedPerWrite: round(mean(msgsReceived) / Math.max(1, writes), 3),
      instancesPerWrite: round((after.instances - before.instances) / Math.max(1, writes), 3),
      clientCpuUsPerWrite: perWriteUs(sets.clientCpuSeconds, writes),
      otherCores: round(Math.max(0, busy - ownCpu) / seconds, 2),
      loadAverage1m: loadAverage1m()
    }
  }
  return { read, sample }
}

/** A Prometheus counter family summed over its labels, from one /metrics text. */
const counterSum = (metrics: string, family: string): number => {
  let sum = 0
  for (const line of metrics.split("\n")) {
    if (!line.startsWith(family) || (line[family.length] !== "{" && line[family.length] !== " ")) continue
    sum += Number(line.slice(line.lastIndexOf(" ") + 1))
  }
  return sum
}

/**
 * Raft traffic each etcd member sent and received so far (its peer HTTP transport, from its /metrics:
 * etcd_network_peer_{sent,received}_bytes_total), the counterpart of a Reef engine's NATS connection.
 */
const etcdPeerBytes = async (cluster: EtcdCluster): Promise<Map<string, { sent: number; received: number }>> => {
  const bytes = new Map<string, { sent: number; received: number }>()
  await Promise.all(
    cluster.members.map(async (m) => {
      const response = await fetch(`${m.endpoint}/metrics`, { signal: AbortSignal.timeout(5_000) })
      if (!response.ok) throw new Error(`etcd ${m.name} /metrics answered ${response.status}`)
      const text = await response.text()
      bytes.set(m.name, {
        sent: counterSum(text, "etcd_network_peer_sent_bytes_total"),
        received: counterSum(text, "etcd_network_peer_received_bytes_total")
      })
    })
  )
  return bytes
}

/**
 * Cost counters of an etcd cluster around one load window: this reads them (and which member leads), and
 * the function it returns reads them again and makes the window's CostSample.
 */
export const etcdCostWindow = async (cluster: EtcdCluster) => {
  const leader = await cluster.leader()
  const bytesBefore = await etcdPeerBytes(cluster)
  const before = cluster.cpuSeconds()
  const busyBefore = machineBusyCpuSeconds()
  return async (put: LoadResult): Promise<CostSample> => {
    const after = cluster.cpuSeconds()
    const busyAfter = machineBusyCpuSeconds()
    const bytesAfter = await etcdPeerBytes(cluster)
    const used = Object.keys(after).map((name) => [name, (after[name] ?? 0) - (before[name] ?? 0)] as const)
    const followers = used.filter(([name]) => name !== leader.name).map(([, s]) => s)
    const leaderCpu = used.find(([name]) => name === leader.name)?.[1] ?? Number.NaN
    const all = used.map(([, s]) => s)
    const sent: Array<number> = []
    const received: Array<number> = []
    for (const [name, a] of bytesAfter) {
      const b = bytesBefore.get(name)
      if (b === undefined) continue
      sent.push(a.sent - b.sent)
      received.push(a.received - b.received)
    }
    const writes = put.ops
    const ownCpu = all.reduce((a, b) => a + b, 0) + put.clientCpuSeconds
    const busy = busyAfter !== undefined && busyBefore !== undefined ? busyAfter - busyBefore : Number.NaN
    const leaderBytes = bytesAfter.get(leader.name)
    const leaderBytesBefore = bytesBefore.get(leader.name)
    return {
      writesPerSec: round(put.throughputPerSec, 0),
      writes,
      errors: put.errors,
      replicaCpuUsPerWrite: perWriteUs(mean(all), writes),
      replicaCpuUsPerWriteMax: perWriteUs(Math.max(...all), writes),
      leaderCpuUsPerWrite: perWriteUs(leaderCpu, writes),
      followerCpuUsPerWrite: perWriteUs(mean(followers), writes),
      bytesSentPerWrite: round(mean(sent) / Math.max(1, writes), 1),
      bytesReceivedPerWrite: round(mean(received) / Math.max(1, writes), 1),
      ...(leaderBytes !== undefined && leaderBytesBefore !== undefined
        ? { leaderBytesSentPerWrite: round((leaderBytes.sent - leaderBytesBefore.sent) / Math.max(1, writes), 1) }
        : {}),
      clientCpuUsPerWrite: perWriteUs(put.clientCpuSeconds, writes),
      otherCores: round(Math.max(0, busy - ownCpu) / put.seconds, 2),
      loadAverage1m: loadAverage1m()
    }
  }
}

const measureReef = (
  natsUrl: string,
  nats: NatsProbe,
  plan: CostPlan,
  n: number,
  variant: CostPlan["variants"][number],
  tag: string
) =>
  Effect.gen(function* () {
    const groupName = `cost-${variant.name}-${n}-${tag}`
    const group = yield* startGroup(natsUrl, n, groupName, variant.args, () => [], undefined, variant.entry)
    const load = (durationMs: number) =>
      runKvLoad({
        addresses: group.addresses,
        mode: "colocated",
        op: "set",
        concurrency: plan.concurrency,
        durationMs
      })
    yield* load(plan.warmUpMs)
    const window = reefCostWindow(group, groupName, nats)
    const before = yield* window.read()
    const sets = yield* load(plan.loadMs)
    const after = yield* window.read()
    return window.sample(before, after, sets)
  }).pipe(Effect.scoped)

const measureEtcd = async (plan: CostPlan, n: number): Promise<CostSample> => {
  const cluster = await startEtcdCluster({ n, unsafeNoFsync: true })
  try {
    await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.warmUpMs })
    const window = await etcdCostWindow(cluster)
    return await window(
      await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.loadMs })
    )
  } finally {
    await cluster.stop()
  }
}

/** Every contender of one round: `${system}N${n}`. */
export type CostRound = Record<string, CostSample>

export const contenderName = (system: string, n: number): string => `${system}N${n}`

/**
 * Runs the plan's rounds on a nats-server of its own (monitoring on, for /connz), etcd alongside when its
 * binary is installed (`REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh`).
 */
export const measureCost = async (
  plan: CostPlan,
  quick: boolean,
  log: (line: string) => void = console.log
): Promise<{ readonly plan: CostPlan; readonly rounds: ReadonlyArray<Round<CostRound>> }> => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const nats = await Effect.runPromise(
      Effect.gen(function* () {
        const monitorPort = yield* freePort
        const server = yield* startNatsServer({ jetstream: false, monitorPort })
        return { url: server.url, monitorUrl: server.monitorUrl!, pid: yield* server.pid }
      }).pipe(Scope.extend(scope))
    )
    const withEtcd = plan.etcd && findEtcdBinary() !== undefined
    if (plan.etcd && !withEtcd) log("  cost: etcd is not installed (REEF_BENCH_PEERS=1 bash scripts/bootstrap.sh)")
    if (withEtcd && !etcdLoadAvailable()) await buildEtcdLoad({ install: true })
    const measured: CostPlan = { ...plan, etcd: withEtcd }
    const contenders: Record<string, (round: number) => Promise<CostSample>> = {}
    for (const n of plan.ns) {
      for (const variant of plan.variants) {
        contenders[contenderName(variant.name, n)] = (round) =>
          Effect.runPromise(measureReef(nats.url, nats, plan, n, variant, String(round)))
      }
      if (withEtcd) contenders[contenderName("etcd", n)] = () => measureEtcd(plan, n)
    }
    const logged = Object.fromEntries(
      Object.entries(contenders).map(([name, run]) => [
        name,
        async (round: number) => {
          const x = await run(round)
          log(
            `  cost ${name}: ${x.writesPerSec}/s, ${x.replicaCpuUsPerWrite} µs CPU/write per replica, ` +
              `${x.bytesReceivedPerWrite ?? "-"} B received/write, other processes ${x.otherCores} cores`
          )
          return x
        }
      ])
    )
    // A round is a dozen groups and clusters (minutes): on this shared machine, busy nearly always, a rerun
    // would double the run and find it busy again. Busy rounds are kept and marked (each ratio's busyRounds).
    const rounds = await interleave<CostRound>(
      { quick, label: "popuc cost per write", log, maxRerunsPerRound: 0 },
      logged
    )
    return { plan: measured, rounds }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
