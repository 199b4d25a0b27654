/**
 * Counters of one actor, kept as plain numbers on the hot path and exported three ways: in heartbeats, in
 * `$SRV.STATS`, and as Effect metrics (`reef_actor_*`, tagged with the actor) for OpenTelemetry.
 */
import { percentile } from "@reef/stats"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricKeyType from "effect/MetricKeyType"
import type * as MetricState from "effect/MetricState"

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

/** Effect metrics of one actor (created once per actor; updated per delivery). */
export interface ActorMetrics {
  readonly handled: Metric.Metric.Counter<number>
  readonly errored: Metric.Metric.Counter<number>
  readonly rejected: (reason: string) => Metric.Metric.Counter<number>
  readonly mailboxDepth: Metric.Metric.Gauge<number>
  readonly handleLatencyMs: Metric.Metric<
    MetricKeyType.MetricKeyType.Histogram,
    number,
    MetricState.MetricState.Histogram
  >
}

export const actorMetrics = (actor: string): ActorMetrics => ({
  handled: Metric.counter("reef_actor_handled_total", { incremental: true }).pipe(Metric.tagged("actor", actor)),
  errored: Metric.counter("reef_actor_errored_total", { incremental: true }).pipe(Metric.tagged("actor", actor)),
  rejected: (reason: string) =>
    Metric.counter("reef_actor_rejected_total", { incremental: true }).pipe(
      Metric.tagged("actor", actor),
      Metric.tagged("reason", reason)
    ),
  mailboxDepth: Metric.gauge("reef_actor_mailbox_depth").pipe(Metric.tagged("actor", actor)),
  handleLatencyMs: Metric.histogram(
    "reef_actor_handle_latency_ms",
    // 0.01 ms .. ~20 s
    MetricBoundaries.exponential({ start: 0.01, factor: 2, count: 22 })
  ).pipe(Metric.tagged("actor", actor))
})

/**
 * Creates an actor's series at zero (its handle latency with no observation yet), so a healthy actor exports
 * its error counter and latency histogram too: dashboards and alerts see them before the first error.
 */
export const touchActorMetrics = (metrics: ActorMetrics): void => {
  metrics.handled.unsafeUpdate(0, [])
  metrics.errored.unsafeUpdate(0, [])
  metrics.mailboxDepth.unsafeUpdate(0, [])
  metrics.handleLatencyMs.unsafeValue([])
}
