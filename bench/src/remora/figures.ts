/**
 * Figs. 4-7 of the paper as configurations, run on a backend: the seeded simulator (the real cores in this
 * process, virtual time, modelled network; the default) or real coordinator and worker processes over NATS
 * (`--real`). The paper's times are multiplied by the backend's `timeScale` (service times, network delay), so
 * each backend keeps its own cost of a message small against a service time the way the paper's setup does.
 */
import type { CoordinatorParams, PolicyName, Separation, Timing, YcsbOptions } from "@reef/remora"

/** The paper's YCSB keyspace. */
const KEYS = 10_000_000
/** The paper's service time per transaction part (µs, before scaling): 0.5 ms stateless + 0.5 ms stateful. */
const PART_US = 500
/** Fig. 7: 2 ms stateless + 0.5 ms stateful (before scaling). */
const LATENCY_STATELESS_US = 2000
const LATENCY_STATEFUL_US = 500

export interface Measured {
  readonly throughput: number
  readonly p50Ms: number
  readonly p90Ms: number
  readonly leaseTransfersPerTx: number
}

export interface FigureConfig {
  readonly figure: string
  readonly name: string
  readonly workers: number
  readonly params: Partial<CoordinatorParams>
  readonly workload: YcsbOptions
  /** saturate: enough load to find the configuration's throughput; rate: an open loop at this share of capacity. */
  readonly load: { readonly kind: "saturate" } | { readonly kind: "rate"; readonly shareOfCapacity: number }
  /** The consensus window; undefined: the backend's short throughput window. */
  readonly windowMs?: number
}

export interface Backend {
  readonly name: string
  /** Multiplies the paper's times (service, network). */
  readonly timeScale: number
  readonly coresPerWorker: number
  /** Virtual cores per worker / service time per transaction: what `workers` workers can execute at most. */
  readonly capacity: (workers: number, workload: YcsbOptions) => number
  readonly measure: (config: FigureConfig) => Promise<Measured>
}

export interface FigureSettings {
  /** Fig. 5's policies (default all five). */
  readonly policies?: ReadonlyArray<PolicyName>
  readonly objects: ReadonlyArray<number>
  readonly zipfs: ReadonlyArray<number>
  readonly workerCounts: ReadonlyArray<number>
  readonly workers: number
}

const ycsb = (objectsPerTx: number, zipf: number, statelessCostUs: number, statefulCostUs: number): YcsbOptions => ({
  keys: KEYS,
  objectsPerTx,
  zipf,
  statelessCostUs,
  statefulCostUs
})

const post: Timing = "post-consensus"
const pre: Timing = "pre-consensus"
export const FIG5_POLICIES: ReadonlyArray<PolicyName> = ["round-robin", "random", "zeus", "hermes-nr", "sfs"]
export const SEPARATIONS: ReadonlyArray<Separation> = ["none", "worker", "coordinator"]

export interface FigureData {
  readonly policies: Array<{ zipf: number; objects: number; policy: PolicyName; tps: number; transfers: number }>
  readonly separation: Array<{ ratio: number; mode: Separation; tps: number }>
  readonly latency: Array<{ config: string; p50: number; p90: number }>
  readonly architecture: Array<{ workers: number; asymmetric: number; symmetric: number }>
  /** Fig. 7's stateless time after scaling (ms): the latency saved is divided by it. */
  readonly latencyStatelessMs: number
  readonly symmetricSchedulingCostUs: number
}

/**
 * Runs Figs. 5, 6, 7 and 4. `symmetricSchedulingCostUs`: a SymArch worker's scheduling work per transaction
 * before scaling (the benchmark passes the coordinator's measured CPU per transaction).
 */
export const runFigures = async (
  backend: Backend,
  s: FigureSettings,
  symmetricCoordinatorUs: number,
  say: (config: FigureConfig, m: Measured) => void
): Promise<FigureData> => {
  const t = backend.timeScale
  const part = PART_US * t
  const measure = async (config: FigureConfig) => {
    const m = await backend.measure(config)
    say(config, m)
    return m
  }
  const data: FigureData = {
    policies: [],
    separation: [],
    latency: [],
    architecture: [],
    latencyStatelessMs: (LATENCY_STATELESS_US * t) / 1000,
    symmetricSchedulingCostUs: Math.round(symmetricCoordinatorUs * t * 10) / 10
  }

  // Fig. 5: scheduling policies on contended YCSB; no separation, no use of the consensus window (§6.3).
  for (const zipf of s.zipfs) {
    for (const objects of s.objects) {
      for (const policy of s.policies ?? FIG5_POLICIES) {
        const m = await measure({
          figure: "Fig. 5",
          name: `${policy}, ${objects} objects, zipf ${zipf}`,
          workers: s.workers,
          params: { policy, separation: "none", statelessTiming: post, schedulingTiming: post },
          workload: ycsb(objects, zipf, part, part),
          load: { kind: "saturate" }
        })
        data.policies.push({ zipf, objects, policy, tps: m.throughput, transfers: m.leaseTransfersPerTx })
      }
    }
  }

  // Fig. 6: separation modes, SFS, contended YCSB (3 objects, zipf 0.9), the same work per transaction split
  // 1:1 and 4:1 between the stateless and the stateful part.
  for (const ratio of [1, 4]) {
    const stateless = (2 * part * ratio) / (ratio + 1)
    for (const mode of SEPARATIONS) {
      const m = await measure({
        figure: "Fig. 6",
        name: `${mode} separation, ${ratio}:1`,
        workers: s.workers,
        params: { policy: "sfs", separation: mode, statelessTiming: pre, schedulingTiming: pre },
        workload: ycsb(3, 0.9, stateless, 2 * part - stateless),
        load: { kind: "saturate" }
      })
      data.separation.push({ ratio, mode, tps: m.throughput })
    }
  }

  // Fig. 7: latency with the stateless part and scheduling in the consensus window (300 ms) or after it.
  for (const c of [
    { config: "Pre-Sep + Pre-Sched", statelessTiming: pre, schedulingTiming: pre },
    { config: "Post-Sep + Pre-Sched", statelessTiming: post, schedulingTiming: pre },
    { config: "Post-Sep + Post-Sched", statelessTiming: post, schedulingTiming: post }
  ]) {
    const m = await measure({
      figure: "Fig. 7",
      name: c.config,
      workers: s.workers,
      params: { policy: "sfs", separation: "coordinator", ...c },
      workload: ycsb(2, 0, LATENCY_STATELESS_US * t, LATENCY_STATEFUL_US * t),
      load: { kind: "rate", shareOfCapacity: 0.3 },
      windowMs: 300
    })
    data.latency.push({ config: c.config, p50: m.p50Ms, p90: m.p90Ms })
  }

  // Fig. 4: per-node throughput, asymmetric vs SymArch; uniform YCSB, round-robin, no separation (§6.2).
  for (const n of s.workerCounts) {
    const base = { policy: "round-robin" as const, separation: "none" as const }
    const workload = ycsb(2, 0, part, part)
    const a = await measure({
      figure: "Fig. 4",
      name: `asymmetric, ${n} workers`,
      workers: n,
      params: { ...base, architecture: "asymmetric" },
      workload,
      load: { kind: "saturate" }
    })
    const y = await measure({
      figure: "Fig. 4",
      name: `SymArch, ${n} workers`,
      workers: n,
      params: { ...base, architecture: "symmetric", symmetricSchedulingCostUs: data.symmetricSchedulingCostUs },
      workload,
      load: { kind: "saturate" }
    })
    data.architecture.push({ workers: n, asymmetric: a.throughput / (n + 1), symmetric: y.throughput / n })
  }
  return data
}
