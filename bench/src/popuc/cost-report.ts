/** The cost scenario's (cost.ts) ratios, figures, curves and table, from its interleaved rounds. */
import { type Curve, type CurvePoint, figureOf, type Ratio, type Round, ratioOf } from "../harness/index.js"
import { printTable } from "../report.js"
import { type CostPlan, type CostRound, type CostSample, contenderName } from "./cost.js"

/** The figures kept per system and N (median, min, max over rounds). */
const FIELDS = [
  "writesPerSec",
  "replicaCpuUsPerWrite",
  "replicaCpuUsPerWriteMax",
  "engineCpuUsPerWrite",
  "hostCpuUsPerWrite",
  "natsCpuUsPerWrite",
  "bytesSentPerWrite",
  "bytesReceivedPerWrite",
  "msgsSentPerWrite",
  "msgsReceivedPerWrite",
  "instancesPerWrite",
  "leaderCpuUsPerWrite",
  "followerCpuUsPerWrite",
  "leaderBytesSentPerWrite",
  "clientCpuUsPerWrite",
  "otherCores",
  "loadAverage1m",
  "errors"
] as const satisfies ReadonlyArray<keyof CostSample>

type Field = (typeof FIELDS)[number]

const NO_VALUE = Number.NaN

/**
 * `reef` is the variant the headline ratios are about; every other Reef variant gets a before/after ratio
 * against it (same N, same round).
 */
export const costResults = (plan: CostPlan, rounds: ReadonlyArray<Round<CostRound>>, reef: string) => {
  const systems = [...plan.variants.map((v) => v.name), ...(plan.etcd ? ["etcd"] : [])]
  const get = (system: string, n: number, field: Field) => (v: CostRound) =>
    v[contenderName(system, n)]?.[field] ?? NO_VALUE
  const conditions = {
    inFlight: plan.concurrency,
    warmUpMs: plan.warmUpMs,
    durationMs: plan.loadMs,
    reefMode: "colocated SET, framed sessions",
    etcd: "PUT, Go client, --unsafe-no-fsync"
  }
  const metrics: Record<string, unknown> = {
    note:
      "per committed write; replicaCpuUsPerWrite is one replica process (engine thread + host), the mean over " +
      "replicas (etcd: over members); engine = the reef-engine thread, host = the rest of the process; " +
      "bytes are one replica's peer traffic (a Reef engine's NATS connection, an etcd member's raft transport), " +
      "the mean over replicas; msgs are one engine's NATS messages; otherCores is the CPU other processes took " +
      "meanwhile",
    plan
  }
  for (const system of systems) {
    for (const n of plan.ns) {
      const entry: Record<string, unknown> = {}
      for (const field of FIELDS) {
        const f = figureOf(rounds, get(system, n, field))
        if (f.values.every((x) => Number.isFinite(x))) entry[field] = f
      }
      metrics[contenderName(system, n)] = entry
    }
  }
  const ratios: Record<string, Ratio> = {}
  const lo = plan.ns[0]!
  const hi = plan.ns[plan.ns.length - 1]!
  if (plan.etcd) {
    for (const n of plan.ns) {
      ratios[`costSetOverEtcdPutN${n}`] = ratioOf(
        {
          numerator: `Reef colocated SET, N = ${n} (/s)`,
          denominator: `etcd PUT, N = ${n} (/s)`,
          conditions
        },
        rounds,
        get(reef, n, "writesPerSec"),
        get("etcd", n, "writesPerSec")
      )
    }
    for (const n of plan.ns) {
      ratios[`replicaCpuPerWriteOverEtcdN${n}`] = ratioOf(
        {
          numerator: `Reef CPU per committed SET of one replica process, N = ${n} (µs)`,
          denominator: `etcd CPU per committed PUT of one member, mean over members, N = ${n} (µs)`,
          conditions
        },
        rounds,
        get(reef, n, "replicaCpuUsPerWrite"),
        get("etcd", n, "replicaCpuUsPerWrite")
      )
    }
    if (hi !== lo)
      ratios[`etcdLeaderCpuPerPutN${hi}OverN${lo}`] = ratioOf(
        {
          numerator: `etcd leader CPU per committed PUT, N = ${hi} (µs)`,
          denominator: `etcd leader CPU per committed PUT, N = ${lo} (µs)`,
          conditions
        },
        rounds,
        get("etcd", hi, "leaderCpuUsPerWrite"),
        get("etcd", lo, "leaderCpuUsPerWrite")
      )
  }
  if (hi !== lo)
    ratios[`replicaCpuPerWriteN${hi}OverN${lo}`] = ratioOf(
      {
        numerator: `Reef CPU per committed write of one replica process, N = ${hi} (µs)`,
        denominator: `Reef CPU per committed write of one replica process, N = ${lo} (µs)`,
        conditions,
        note: "the paper's scaling claim: what one replica would need on a machine of its own, flat in N"
      },
      rounds,
      get(reef, hi, "replicaCpuUsPerWrite"),
      get(reef, lo, "replicaCpuUsPerWrite")
    )
  for (const variant of plan.variants) {
    if (variant.name === reef) continue
    const other = variant.name
    const suffix = other.charAt(0).toUpperCase() + other.slice(1)
    for (const n of plan.ns) {
      const spec = (what: string, unit: string) => ({
        numerator: `Reef (${reef}) ${what}, N = ${n} (${unit})`,
        denominator: `Reef ${variant.args.join(" ")} (${other}) ${what}, N = ${n} (${unit})`,
        conditions
      })
      ratios[`setN${n}Over${suffix}`] = ratioOf(
        spec("colocated SET", "/s"),
        rounds,
        get(reef, n, "writesPerSec"),
        get(other, n, "writesPerSec")
      )
      ratios[`replicaCpuPerWriteN${n}Over${suffix}`] = ratioOf(
        spec("replica CPU per write", "µs"),
        rounds,
        get(reef, n, "replicaCpuUsPerWrite"),
        get(other, n, "replicaCpuUsPerWrite")
      )
      ratios[`bytesReceivedPerWriteN${n}Over${suffix}`] = ratioOf(
        spec("bytes received per write per engine", "B"),
        rounds,
        get(reef, n, "bytesReceivedPerWrite"),
        get(other, n, "bytesReceivedPerWrite")
      )
    }
  }
  const curve = (title: string, field: Field, yTitle: string, only?: ReadonlyArray<string>): Curve => {
    const points: Array<CurvePoint> = []
    for (const system of systems) {
      if (only !== undefined && !only.includes(system)) continue
      for (const n of plan.ns) {
        const f = figureOf(rounds, get(system, n, field))
        if (Number.isFinite(f.median)) points.push({ series: system, x: n, y: f.median, yMin: f.min, yMax: f.max })
      }
    }
    return { title, x: { title: "replicas (N)" }, y: { title: yTitle }, points }
  }
  const curves: Record<string, Curve> = {
    cpu: curve(
      `CPU per committed write of one replica process (${plan.concurrency} in flight)`,
      "replicaCpuUsPerWrite",
      "CPU per write (µs)"
    ),
    bytes: curve(
      "Peer bytes one replica receives per committed write (Reef: its engine's NATS connection; etcd: raft)",
      "bytesReceivedPerWrite",
      "bytes received per write (B)"
    )
  }
  return { ratios, metrics, curves }
}

export const printCostTable = (plan: CostPlan, rounds: ReadonlyArray<Round<CostRound>>) => {
  const systems = [...plan.variants.map((v) => v.name), ...(plan.etcd ? ["etcd"] : [])]
  const rows: Array<ReadonlyArray<unknown>> = []
  for (const system of systems) {
    for (const n of plan.ns) {
      const med = (field: Field) => {
        const f = figureOf(rounds, (v) => v[contenderName(system, n)]?.[field] ?? NO_VALUE)
        return Number.isFinite(f.median) ? f.median : ""
      }
      rows.push([
        system,
        n,
        med("writesPerSec"),
        med("replicaCpuUsPerWrite"),
        med("engineCpuUsPerWrite"),
        med("hostCpuUsPerWrite"),
        med("leaderCpuUsPerWrite"),
        med("natsCpuUsPerWrite"),
        med("bytesSentPerWrite"),
        med("bytesReceivedPerWrite"),
        med("msgsReceivedPerWrite"),
        med("instancesPerWrite"),
        med("otherCores")
      ])
    }
  }
  printTable(
    `Cost per committed write (medians of ${rounds.length} interleaved rounds; µs of CPU, per engine connection)`,
    [
      "system",
      "N",
      "writes/s",
      "replica µs",
      "engine µs",
      "host µs",
      "leader µs",
      "nats µs",
      "sent B",
      "recv B",
      "recv msgs",
      "instances",
      "other cores"
    ],
    rows
  )
}

/** What the `popuc` suite's group-size rounds carry per N: a Reef and an etcd cost window (cost.ts). */
type SizesCostRound = {
  readonly reef: ReadonlyArray<{ readonly n: number; readonly cost: CostSample }>
  readonly etcd: { readonly sizes: ReadonlyArray<{ readonly n: number; readonly cost: CostSample }> }
}

/**
 * The `popuc` suite's cost per write: its group-size rounds (Reef's colocated SET window and etcd's PUT window
 * at every N, the same windows as its throughput figures) reshaped into cost rounds and reported as
 * popuc-cost reports them; its throughput ratios are named as popuc names them (setThroughputVsEtcdN<n>),
 * N = 5 left to popuc's own, and `print` prints the table.
 */
export const sizesCostResults = (
  plan: Pick<CostPlan, "ns" | "warmUpMs" | "loadMs" | "concurrency">,
  rounds: ReadonlyArray<Round<SizesCostRound>>
) => {
  const costRounds: ReadonlyArray<Round<CostRound>> = rounds.map((r) => ({
    ...r,
    values: Object.fromEntries([
      ...r.values.reef.map((s) => [contenderName("reef", s.n), s.cost] as const),
      ...r.values.etcd.sizes.map((s) => [contenderName("etcd", s.n), s.cost] as const)
    ])
  }))
  const costPlan: CostPlan = { ...plan, variants: [{ name: "reef", args: [] }], etcd: true }
  const { ratios, metrics, curves } = costResults(costPlan, costRounds, "reef")
  const kept = Object.fromEntries(
    Object.entries(ratios).flatMap(([name, r]) => {
      const n = /^costSetOverEtcdPutN(\d+)$/.exec(name)?.[1]
      if (n === undefined) return [[name, r]]
      return n === "5" ? [] : [[`setThroughputVsEtcdN${n}`, r]]
    })
  )
  return { ratios: kept, metrics, curves, print: () => printCostTable(costPlan, costRounds) }
}
