/**
 * `pnpm bench popuc --hosts N [--quick]` (issue 29): the POPUC KV against etcd across N hosts of one machine
 * (`@reef/devkit/hosts`: network namespaces on a bridge), at 0.1, 0.5 and 1 ms of one-way delay (± 10 % jitter)
 * on every link between hosts, placed the same way: one replica and one etcd member per host. Reef's replicas
 * talk through a NATS cluster (one server per host) whose routes go through the link proxy; etcd's members
 * dial each other through a second link proxy with the same delay (their advertised peer URLs are its ports).
 * The load comes from the bench process in the root namespace, to every member, undelayed on both sides:
 * Reef's Node KV client (framed sessions, colocated) and etcd's Go clientv3 (etcdload), 256-byte values over
 * 10,000 keys, etcd with --unsafe-no-fsync since POPUC keeps state in memory. Every (system, delay) pair runs
 * once per interleaved round on a fresh cluster, warmed alike; the ratios are medians with min–max over the
 * rounds, written as the section `acrossHostsN<N>` of bench/results/popuc.json (the rest of the file is kept).
 *
 *   throughput  128 writes in flight: Reef Set/s over etcd PUT/s
 *   latency     one write in flight: etcd's PUT p50 over Reef's Set p50 (above 1: Reef answers sooner)
 *
 * The proxy's held time is recorded per run: on a loaded 2-core machine the delay got exceeds the one asked.
 * So are Reef's round period (ΔI is calibrated over the links at bootstrap, tail included) and its self-quits.
 */
import {
  type ClusterHost,
  type Hosts,
  hostsUnavailable,
  type LinkProxyProcess,
  type ProxyStats,
  startHosts,
  startLinkProxyProcess
} from "@reef/devkit/hosts"
import * as Effect from "effect/Effect"
import {
  interleave,
  machineNow,
  type Ratio,
  type Round,
  ratioOf,
  readMachine,
  sig,
  spreadOf,
  writeSection
} from "../harness/index.js"
import { type KvLoadResult, runKvLoad } from "../kv-load.js"
import {
  buildEtcdLoad,
  ETCD_PEER_PORT,
  etcdLoadAvailable,
  type LoadResult,
  runEtcdLoad,
  startEtcdCluster
} from "../peers/index.js"
import { engineSums } from "../popuc/plan.js"
import { startGroup } from "../popuc-group.js"
import { round } from "../report.js"

/** One section of popuc.json per host count: `acrossHostsN3`, `acrossHostsN5`. */
export const sectionOf = (n: number) => `acrossHostsN${n}`
const DELAYS_MS = [0.1, 0.5, 1] as const
const JITTER_SHARE = 0.1

interface AcrossHostsPlan {
  readonly n: number
  readonly warmUpMs: number
  readonly loadMs: number
  readonly loneMs: number
  readonly concurrency: number
}

const planFor = (quick: boolean, n: number): AcrossHostsPlan =>
  quick
    ? { n, warmUpMs: 1_500, loadMs: 2_000, loneMs: 1_500, concurrency: 128 }
    : { n, warmUpMs: 5_000, loadMs: 4_000, loneMs: 3_000, concurrency: 128 }

/** One system's figures at one delay in one round. */
interface Figures {
  readonly perSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
  readonly loneP50Ms: number
  readonly loneP99Ms: number
  /** How long the link proxy really held the bytes (asked: the delay ± jitter). */
  readonly heldMs: { readonly p50: number; readonly p99: number }
  /** Reef: the round period its replicas calibrated over these links (from ΔI), and self-quits in the runs. */
  readonly engine?: { readonly roundPeriodMs: number; readonly selfQuits: number }
}

const figuresOf = (load: KvLoadResult | LoadResult, lone: KvLoadResult | LoadResult, held: ProxyStats): Figures => ({
  perSec: round(load.throughputPerSec, 0),
  p50Ms: round(load.p50Ms),
  p99Ms: round(load.p99Ms),
  errors: load.errors + lone.errors,
  loneP50Ms: round(lone.p50Ms, 3),
  loneP99Ms: round(lone.p99Ms, 3),
  heldMs: { p50: round(held.heldMs.p50, 3), p99: round(held.heldMs.p99, 3) }
})

const labelOf = (delayMs: number) => (delayMs < 1 ? `${Math.round(delayMs * 1000)}us` : `${delayMs}ms`)

/** The `--hosts N` flag: 3 or 5 hosts. */
export const hostsFlag = (flags: ReadonlyArray<string>): number => {
  const at = flags.indexOf("--hosts")
  const n = Number(flags[at + 1])
  if (at < 0 || !Number.isInteger(n) || n < 3 || n > 9 || n % 2 === 0) {
    throw new Error(`--hosts takes an odd number of hosts from 3 to 9, e.g. --hosts 3 (got ${flags[at + 1]})`)
  }
  return n
}

/** Reef at one delay: a fresh group of one replica per host, each on its own host's server and address. */
const reefRun = (plan: AcrossHostsPlan, h: Hosts, delayMs: number, roundIndex: number) =>
  Effect.gen(function* () {
    yield* h.setDelay(delayMs, delayMs * JITTER_SHARE)
    const place = (i: number) => {
      const host: ClusterHost = h.hosts[i]!
      return { natsUrl: host.natsUrl, address: host.address, prefix: host.exec }
    }
    const group = yield* startGroup(h.natsUrls[0]!, plan.n, `x${labelOf(delayMs)}r${roundIndex}`, [], () => [], place)
    const load = (concurrency: number, durationMs: number) =>
      runKvLoad({ addresses: group.addresses, mode: "colocated", op: "set", concurrency, durationMs })
    yield* load(plan.concurrency, plan.warmUpMs)
    yield* h.resetProxyStats
    const before = yield* engineSums(group)
    const sets = yield* load(plan.concurrency, plan.loadMs)
    const lone = yield* load(1, plan.loneMs)
    const after = yield* engineSums(group)
    const engine = { roundPeriodMs: round(after.roundPeriodMs, 2), selfQuits: after.selfQuits - before.selfQuits }
    return { ...figuresOf(sets, lone, yield* h.proxyStats), engine }
  }).pipe(Effect.scoped)

/** etcd at one delay: a fresh cluster of one member per host, peers dialling each other through the proxy. */
const etcdRun = async (plan: AcrossHostsPlan, h: Hosts, proxy: LinkProxyProcess, delayMs: number) => {
  await Effect.runPromise(proxy.setDelay(delayMs, delayMs * JITTER_SHARE))
  const cluster = await startEtcdCluster({
    n: plan.n,
    unsafeNoFsync: true,
    startTimeoutMs: 60_000,
    placement: (i) => ({
      address: h.hosts[i]!.address,
      prefix: h.hosts[i]!.exec,
      peerAdvertiseUrl: `http://${h.network.gateway}:${proxy.ports[i]}`
    })
  })
  try {
    await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.warmUpMs })
    await Effect.runPromise(proxy.reset)
    const puts = await runEtcdLoad(cluster, { op: "put", concurrency: plan.concurrency, durationMs: plan.loadMs })
    const lone = await runEtcdLoad(cluster, { op: "put", concurrency: 1, conns: 1, durationMs: plan.loneMs })
    return figuresOf(puts, lone, await Effect.runPromise(proxy.stats))
  } finally {
    await cluster.stop()
  }
}

type Values = Record<string, Figures>

const ratiosOf = (plan: AcrossHostsPlan, rounds: ReadonlyArray<Round<Values>>) => {
  const conditions = {
    hosts: plan.n,
    placement: "one replica / one etcd member per host (network namespaces on a bridge)",
    jitter: `± ${JITTER_SHARE * 100} % of the delay, uniform`,
    warmUpMs: plan.warmUpMs,
    valueBytes: 256,
    keySpace: 10_000,
    durability: "in memory (etcd --unsafe-no-fsync)",
    clusters: "fresh per round and delay",
    clients:
      "the bench process, undelayed to every member: Reef's Node KV client (colocated, framed); etcd's Go clientv3"
  }
  const ratios: Record<string, Ratio> = {}
  for (const d of DELAYS_MS) {
    const at = labelOf(d)
    const links = `${d} ms one-way delay on every link between hosts`
    ratios[`${sectionOf(plan.n)}SetVsEtcdAt${at}`] = ratioOf(
      {
        numerator: `Reef Set across ${plan.n} hosts, ${links}, ${plan.concurrency} in flight (writes/s)`,
        denominator: `etcd PUT across ${plan.n} hosts, ${links}, ${plan.concurrency} in flight (writes/s)`,
        conditions: { ...conditions, delayMs: d, inFlight: plan.concurrency, durationMs: plan.loadMs }
      },
      rounds,
      (v) => v[`reef${at}`]!.perSec,
      (v) => v[`etcd${at}`]!.perSec
    )
    ratios[`${sectionOf(plan.n)}LoneWriteP50EtcdOverReefAt${at}`] = ratioOf(
      {
        numerator: `etcd PUT p50 across ${plan.n} hosts, ${links}, 1 in flight (ms)`,
        denominator: `Reef Set p50 across ${plan.n} hosts, ${links}, 1 in flight (ms)`,
        conditions: { ...conditions, delayMs: d, inFlight: 1, durationMs: plan.loneMs },
        note: "above 1: Reef answers a lone write sooner"
      },
      rounds,
      (v) => v[`etcd${at}`]!.loneP50Ms,
      (v) => v[`reef${at}`]!.loneP50Ms
    )
  }
  return ratios
}

/** How the advantage moves with delay: each ratio's median at 1 ms over its median at 0.1 ms. */
const closingNote = (plan: AcrossHostsPlan, ratios: Record<string, Ratio>) => {
  const median = (name: string, d: number) => ratios[`${sectionOf(plan.n)}${name}At${labelOf(d)}`]!.median
  const line = (name: string, what: string) =>
    `${what}: ${DELAYS_MS.map((d) => `${median(name, d)} at ${d} ms`).join(", ")} ` +
    `(×${sig(median(name, 1) / median(name, 0.1), 3)} from 0.1 to 1 ms)`
  return [
    line("SetVsEtcd", `Reef/etcd write throughput, ${plan.concurrency} in flight`),
    line("LoneWriteP50EtcdOverReef", "etcd/Reef lone-write p50")
  ].join("; ")
}

export const runAcrossHosts = async (quick: boolean, flags: ReadonlyArray<string>) => {
  const unavailable = hostsUnavailable()
  if (unavailable !== undefined) throw new Error(`pnpm bench popuc --hosts needs network namespaces: ${unavailable}`)
  const plan = planFor(quick, hostsFlag(flags))
  const start = readMachine()
  if (!etcdLoadAvailable()) console.log("  building etcdload (Go, offline)")
  await buildEtcdLoad({ install: true })
  const rounds = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const h = yield* startHosts({ n: plan.n, say: (line) => console.log(`  ${line}`) })
        const etcdProxy = yield* startLinkProxyProcess({
          links: h.hosts.map((host, j) => ({
            to: j,
            listenHost: h.network.gateway,
            listenPort: 0,
            targetHost: host.address,
            targetPort: ETCD_PEER_PORT
          })),
          hostAddresses: h.hosts.map((host) => host.address),
          delayMs: 0,
          jitterMs: 0,
          seed: 29
        })
        const contenders: Record<string, (r: number) => Promise<Figures>> = {}
        for (const d of DELAYS_MS) {
          contenders[`reef${labelOf(d)}`] = (r) => Effect.runPromise(reefRun(plan, h, d, r))
          contenders[`etcd${labelOf(d)}`] = () => etcdRun(plan, h, etcdProxy, d)
        }
        return yield* Effect.promise(() =>
          interleave<Values>({ quick, label: `popuc across ${plan.n} hosts` }, contenders)
        )
      })
    )
  )
  const ratios = ratiosOf(plan, rounds)
  const note = closingNote(plan, ratios)
  const medians = Object.fromEntries(
    Object.keys(rounds[0]!.values).map((k) => {
      const of = (f: (x: Figures) => number) => sig(spreadOf(rounds.map((r) => f(r.values[k]!))).median, 4)
      return [
        k,
        {
          perSec: of((x) => x.perSec),
          p50Ms: of((x) => x.p50Ms),
          loneP50Ms: of((x) => x.loneP50Ms),
          heldP50Ms: of((x) => x.heldMs.p50),
          heldP99Ms: of((x) => x.heldMs.p99),
          ...(rounds[0]!.values[k]!.engine === undefined
            ? {}
            : {
                roundPeriodMs: of((x) => x.engine!.roundPeriodMs),
                selfQuits: rounds.reduce((sum, r) => sum + r.values[k]!.engine!.selfQuits, 0)
              })
        }
      ]
    })
  )
  for (const [name, r] of Object.entries(ratios)) console.log(`${name}: ${r.median} (${r.min}–${r.max})`)
  console.log(`\n${note}`)
  const command = `pnpm bench popuc --hosts ${plan.n}${quick ? " --quick" : ""}`
  const path = await writeSection("popuc", sectionOf(plan.n), {
    info: { command, quick, machine: machineNow(start) },
    ratios,
    metrics: {
      plan,
      delaysMs: DELAYS_MS,
      note,
      medians,
      rounds: rounds.map((r) => ({ index: r.index, busy: r.busy, values: r.values }))
    }
  })
  console.log(`wrote ${path} (section ${sectionOf(plan.n)})`)
}
