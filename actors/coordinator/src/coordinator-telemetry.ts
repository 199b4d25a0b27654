/**
 * The coordinator's metrics (Effect metrics: `/metrics` and OTLP export them, the Grafana dashboard's Remora row
 * reads them). Counters follow the driver's own counters, sampled once per heartbeat (`sample`, from the status
 * reader: no call on the hot path); gauges are sampled there too. The one event measured as it happens is a
 * block's completion (`onBlockCompleted`: from its commit to its last transaction's completion). Every series is
 * tagged with the coordinator and created at zero when it starts, so a quiet coordinator's series exist.
 */
import type { CoordinatorState } from "@reef/remora"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

const counter = (name: string, description: string) => Metric.counter(name, { description, incremental: true })

const COUNTERS = {
  accepted: counter("reef_remora_admitted_total", "Transactions admitted (signature shape, sets, namespace, new id)"),
  rejected: counter("reef_remora_rejected_total", "Transactions refused at admission"),
  committed: counter("reef_remora_committed_total", "Transactions in blocks consensus committed"),
  completed: counter("reef_remora_completed_total", "Transactions executed, their receipts given"),
  blocks: counter("reef_remora_blocks_total", "Blocks committed"),
  recoveries: counter("reef_remora_recoveries_total", "Worker recoveries (§4.6): a worker left or restarted"),
  workerRestarts: counter("reef_remora_worker_restarts_total", "Workers seen again as a new incarnation"),
  epochsPersisted: counter("reef_remora_epochs_persisted_total", "Snapshot epochs persisted")
} as const

/** What `sample` reads of the driver: its counters, its queues and its core. */
export interface CoordinatorSample {
  readonly counters: Readonly<Record<keyof typeof COUNTERS, number>>
  /** Admitted transactions waiting for a block. */
  readonly mempool: number
  readonly core: CoordinatorState<unknown>
  /** Every present worker's part in the pool (worker-pool.ts). */
  readonly pool: ReadonlyArray<{ readonly state: "active" | "retiring" | "spare" }>
}

const POOL_STATES = ["active", "retiring", "spare"] as const
/** The autoscaler's decisions and their reasons (core/autoscaler.ts ScaleDecision). */
const DECISIONS = [
  ["Spawn", "load-high"],
  ["Spawn", "below-min"],
  ["Retire", "load-low"],
  ["Retire", "above-max"]
] as const
const poolSize = Metric.gauge("reef_remora_pool_size", {
  description: "Workers in the pool by state: active (take work), retiring (draining), spare (idle, for scale-out)"
})
const decisions = counter(
  "reef_remora_scaling_decisions_total",
  "Autoscaler decisions by decision (Spawn, Retire) and reason (load-high, load-low, below-min, above-max)"
)

const mempoolGauge = Metric.gauge("reef_remora_mempool_transactions", {
  description: "Admitted transactions waiting for a block"
})
const dispatchQueue = Metric.gauge("reef_remora_dispatch_queue_transactions", {
  description: "Committed transactions not completed yet: dispatched or waiting for their objects"
})
const workerLoad = Metric.gauge("reef_remora_worker_load", {
  description: "Outstanding work the coordinator placed on each active worker (its load P, in cost units)"
})
const persistIndex = Metric.gauge("reef_remora_persist_index", {
  description: "Sequence number up to which executed state is persisted in an epoch snapshot"
})
const blockLatency = Metric.histogram(
  "reef_remora_block_latency_ms",
  // 1 ms .. ~65 s
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 17 }),
  "Time from a block's commit to the completion of its last transaction, in ms"
)

export class CoordinatorTelemetry {
  private readonly tags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly seen: Record<keyof typeof COUNTERS, number>
  /** Per-worker label sets, made once per worker. */
  private readonly workerTags = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
  private readonly poolTags: Record<(typeof POOL_STATES)[number], ReadonlyArray<MetricLabel.MetricLabel>>

  constructor(coordinator: string) {
    this.tags = [MetricLabel.make("coordinator", coordinator)]
    const zero = {} as Record<keyof typeof COUNTERS, number>
    for (const [key, metric] of Object.entries(COUNTERS) as Array<
      [keyof typeof COUNTERS, (typeof COUNTERS)["blocks"]]
    >) {
      metric.unsafeUpdate(0, this.tags)
      zero[key] = 0
    }
    this.seen = zero
    for (const gauge of [mempoolGauge, dispatchQueue, persistIndex]) gauge.unsafeUpdate(0, this.tags)
    this.poolTags = {
      active: [...this.tags, MetricLabel.make("state", "active")],
      retiring: [...this.tags, MetricLabel.make("state", "retiring")],
      spare: [...this.tags, MetricLabel.make("state", "spare")]
    }
    for (const state of POOL_STATES) poolSize.unsafeUpdate(0, this.poolTags[state])
    // Every decision's series exists from the start (at 0), so a rate over it is defined before the first one.
    for (const [decision, reason] of DECISIONS) decisions.unsafeUpdate(0, this.decisionTags(decision, reason))
    // Registers the histogram's series (empty buckets) without an observation.
    blockLatency.unsafeValue(this.tags)
  }

  /** A block's last transaction completed, `ms` after the block was committed. */
  onBlockCompleted(ms: number): void {
    blockLatency.unsafeUpdate(Math.max(0, ms), this.tags)
  }

  /** The autoscaler decided (rare: counted as it happens). */
  onDecision(decision: string, reason: string): void {
    decisions.unsafeUpdate(1, this.decisionTags(decision, reason))
  }

  private decisionTags(decision: string, reason: string): ReadonlyArray<MetricLabel.MetricLabel> {
    return [...this.tags, MetricLabel.make("decision", decision), MetricLabel.make("reason", reason)]
  }

  /** Once per heartbeat: counters by what is new since the last sample, gauges as they are now. */
  sample(s: CoordinatorSample): void {
    for (const [key, metric] of Object.entries(COUNTERS) as Array<
      [keyof typeof COUNTERS, (typeof COUNTERS)["blocks"]]
    >) {
      const now = s.counters[key]
      // A restored coordinator starts its counters from its log: count only what is new.
      if (now > this.seen[key]) metric.unsafeUpdate(now - this.seen[key], this.tags)
      this.seen[key] = Math.max(this.seen[key], now)
    }
    mempoolGauge.unsafeUpdate(s.mempool, this.tags)
    dispatchQueue.unsafeUpdate(Math.max(0, s.counters.committed - s.counters.completed), this.tags)
    persistIndex.unsafeUpdate(s.core.persisted.seq, this.tags)
    for (const state of POOL_STATES) {
      poolSize.unsafeUpdate(s.pool.filter((m) => m.state === state).length, this.poolTags[state])
    }
    const core = s.core
    for (const code of core.active) {
      const worker = core.registry.idOf(code)
      let tags = this.workerTags.get(worker)
      if (tags === undefined) {
        tags = [...this.tags, MetricLabel.make("worker", worker)]
        this.workerTags.set(worker, tags)
      }
      const load = (core.statefulLoad[code] ?? 0) + (core.statelessLoad[code] ?? 0) + (core.plannedLoad[code] ?? 0)
      workerLoad.unsafeUpdate(load, tags)
    }
    // A worker no longer active carries no load.
    for (const [worker, tags] of this.workerTags) {
      if (!core.active.some((code) => core.registry.idOf(code) === worker)) workerLoad.unsafeUpdate(0, tags)
    }
  }
}
