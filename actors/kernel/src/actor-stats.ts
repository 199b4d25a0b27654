/**
 * Counters of one actor, kept as plain numbers on the hot path and exported three ways: in heartbeats, in
 * `$SRV.STATS`, and as Effect metrics (`reef_actor_*`, tagged with the actor) for OpenTelemetry.
 */
import { percentile } from "@reef/stats"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

const LATENCY_WINDOW = 1024

export class ActorStats {
  handled = 0
  errored = 0
  /** Messages refused without running a handler: decode errors, overload, stopped actor. */
  rejected = 0
  restarts = 0
  private readonly latenciesMs = new Float64Array(LATENCY_WINDOW)
  private latencyCount = 0

  recordLatency(ms: number): void {
    this.latenciesMs[this.latencyCount % LATENCY_WINDOW] = ms
    this.latencyCount++
  }

  /** Percentile (nearest rank) of the last LATENCY_WINDOW handle latencies, in ms (0 when nothing was handled). */
  latencyPercentileMs(p: number): number {
    const n = Math.min(this.latencyCount, LATENCY_WINDOW)
    return n === 0 ? 0 : percentile(this.latenciesMs.subarray(0, n), p)
  }

  snapshot(mailboxDepth: number) {
    return {
      handled: this.handled,
      errored: this.errored,
      rejected: this.rejected,
      restarts: this.restarts,
      mailboxDepth,
      handleLatencyP50Ms: this.latencyPercentileMs(50),
      handleLatencyP99Ms: this.latencyPercentileMs(99)
    }
  }
}

/**
 * Effect metrics of one actor, updated synchronously where the counters change (no Effect step per delivery).
 * The actor's label array is made once: a metric tagged with `Metric.tagged` builds a new label array and looks
 * its key up in the registry on every update.
 */
export interface ActorMetrics {
  readonly handled: (count: number) => void
  readonly errored: (count: number) => void
  readonly rejected: (reason: string) => void
  readonly mailboxDepth: (depth: number) => void
  readonly handleLatencyMs: (ms: number) => void
  /**
   * Creates the actor's series at zero (its handle latency with no observation yet), so a healthy actor exports
   * its error counter and latency histogram too: dashboards and alerts see them before the first error.
   */
  readonly touch: () => void
}

const handledTotal = Metric.counter("reef_actor_handled_total", { incremental: true })
const erroredTotal = Metric.counter("reef_actor_errored_total", { incremental: true })
const rejectedTotal = Metric.counter("reef_actor_rejected_total", { incremental: true })
const mailboxDepthGauge = Metric.gauge("reef_actor_mailbox_depth")
const handleLatency = Metric.histogram(
  "reef_actor_handle_latency_ms",
  // 0.01 ms .. ~20 s
  MetricBoundaries.exponential({ start: 0.01, factor: 2, count: 22 })
)

export const actorMetrics = (actor: string): ActorMetrics => {
  const labels = [MetricLabel.make("actor", actor)]
  const rejectedLabels = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
  return {
    handled: (count) => handledTotal.unsafeUpdate(count, labels),
    errored: (count) => erroredTotal.unsafeUpdate(count, labels),
    rejected: (reason) => {
      let tags = rejectedLabels.get(reason)
      if (tags === undefined) {
        tags = [...labels, MetricLabel.make("reason", reason)]
        rejectedLabels.set(reason, tags)
      }
      rejectedTotal.unsafeUpdate(1, tags)
    },
    mailboxDepth: (depth) => mailboxDepthGauge.unsafeUpdate(depth, labels),
    handleLatencyMs: (ms) => handleLatency.unsafeUpdate(ms, labels),
    touch: () => {
      handledTotal.unsafeUpdate(0, labels)
      erroredTotal.unsafeUpdate(0, labels)
      mailboxDepthGauge.unsafeUpdate(0, labels)
      handleLatency.unsafeValue(labels)
    }
  }
}
