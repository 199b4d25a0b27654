/**
 * A worker's metrics (Effect metrics: `/metrics` and OTLP export them, the Grafana dashboard's Remora row reads
 * them), sampled once per heartbeat from the role status the worker reports (`sample`, from the status reader:
 * nothing on the execution path). Counters count what is new since the last sample: a restarted driver (a new
 * generation after a fence) starts its own from zero. Tagged with the worker, created at zero when it starts.
 */
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"

const counter = (name: string, description: string) => Metric.counter(name, { description, incremental: true })

/** Role-status keys that are running totals, and the counter each feeds. */
const TOTALS = [
  ["executed", counter("reef_remora_worker_executed_total", "Transactions this worker executed")],
  [
    "leases in",
    counter(
      "reef_remora_lease_transfers_total",
      "Objects this worker received from their previous owner (lease transfers)"
    )
  ],
  [
    "fences",
    counter("reef_remora_worker_fences_total", "Times this worker was fenced to a new generation (a recovery)")
  ]
] as const

const objects = Metric.gauge("reef_remora_worker_objects", { description: "Objects this worker holds" })
const busyCores = Metric.gauge("reef_remora_worker_busy_cores", { description: "Virtual cores executing now" })
const waiting = Metric.gauge("reef_remora_worker_waiting_tasks", {
  description: "Tasks waiting here for objects or a free core"
})

const numberOf = (text: string | undefined): number => {
  const n = Number(text)
  return Number.isFinite(n) ? n : 0
}

export class WorkerTelemetry {
  private readonly tags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly seen = new Map<string, number>()

  constructor(worker: string) {
    this.tags = [MetricLabel.make("worker", worker)]
    for (const [, metric] of TOTALS) metric.unsafeUpdate(0, this.tags)
    for (const gauge of [objects, busyCores, waiting]) gauge.unsafeUpdate(0, this.tags)
  }

  /** Once per heartbeat, from the role status (`executed`, `leases in`, `busy` as `2/4`, ...). */
  sample(status: Readonly<Record<string, string>>): void {
    for (const [key, metric] of TOTALS) {
      const now = numberOf(status[key])
      const before = this.seen.get(key) ?? 0
      // A new driver (after a fence) counts from zero again: what it counts is all new.
      const fresh = now >= before ? now - before : now
      if (fresh > 0) metric.unsafeUpdate(fresh, this.tags)
      this.seen.set(key, now)
    }
    objects.unsafeUpdate(numberOf(status.objects), this.tags)
    busyCores.unsafeUpdate(numberOf(status.busy?.split("/")[0]), this.tags)
    waiting.unsafeUpdate(numberOf(status.waiting), this.tags)
  }
}
