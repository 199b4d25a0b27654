import { spawnSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import { formatValue, prometheusText, sanitizeLabelName, sanitizeMetricName } from "./prometheus.js"

/** A snapshot of just the metrics whose name starts with `prefix` (the registry is global to the process). */
const pageOf = (prefix: string, constantLabels = {}) =>
  prometheusText(
    Metric.unsafeSnapshot().filter((p) => p.metricKey.name.startsWith(prefix)),
    constantLabels
  )

const promtool = spawnSync("promtool", ["--version"]).status === 0

describe("prometheusText", () => {
  it.effect("counters, gauges and their tags", () =>
    Effect.gen(function* () {
      const handled = Metric.counter("ptest_a_handled_total", { incremental: true, description: "handled\nmessages" })
      yield* Metric.incrementBy(handled.pipe(Metric.tagged("actor", "c1")), 3)
      yield* Metric.incrementBy(handled.pipe(Metric.tagged("actor", 'say "hi"\\')), 1)
      yield* Metric.set(Metric.gauge("ptest_a_depth").pipe(Metric.tagged("actor", "c1")), 7)
      yield* Metric.incrementBy(Metric.counter("ptest_a_up_down"), -2)
      expect(pageOf("ptest_a_", { job: "j" })).toBe(
        [
          "# TYPE ptest_a_depth gauge",
          'ptest_a_depth{actor="c1",job="j"} 7',
          "# HELP ptest_a_handled_total handled\\nmessages",
          "# TYPE ptest_a_handled_total counter",
          'ptest_a_handled_total{actor="c1",job="j"} 3',
          'ptest_a_handled_total{actor="say \\"hi\\"\\\\",job="j"} 1',
          // A counter that may go down is a gauge to Prometheus.
          "# TYPE ptest_a_up_down gauge",
          'ptest_a_up_down{job="j"} -2',
          ""
        ].join("\n")
      )
    })
  )

  it.effect("histograms: cumulative buckets in order, +Inf, _sum and _count", () =>
    Effect.gen(function* () {
      const latency = Metric.histogram("ptest_b_latency_ms", MetricBoundaries.fromIterable([1, 2, 10])).pipe(
        Metric.tagged("actor", "c1")
      )
      for (const value of [0.5, 1.5, 1.7, 3, 100]) yield* Metric.update(latency, value)
      expect(pageOf("ptest_b_")).toBe(
        [
          "# TYPE ptest_b_latency_ms histogram",
          'ptest_b_latency_ms_bucket{actor="c1",le="1"} 1',
          'ptest_b_latency_ms_bucket{actor="c1",le="2"} 3',
          'ptest_b_latency_ms_bucket{actor="c1",le="10"} 4',
          'ptest_b_latency_ms_bucket{actor="c1",le="+Inf"} 5',
          'ptest_b_latency_ms_sum{actor="c1"} 106.7',
          'ptest_b_latency_ms_count{actor="c1"} 5',
          ""
        ].join("\n")
      )
    })
  )

  it("sanitizes names and spells special values the Prometheus way", () => {
    expect(sanitizeMetricName("reef.actor-handled")).toBe("reef_actor_handled")
    expect(sanitizeMetricName("9lives")).toBe("_9lives")
    expect(sanitizeLabelName("service.name")).toBe("service_name")
    expect([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, 2n, 0.25].map(formatValue)).toEqual([
      "+Inf",
      "-Inf",
      "NaN",
      "2",
      "0.25"
    ])
  })

  it.effect("the page of every metric in this process is accepted by promtool", () =>
    Effect.gen(function* () {
      if (!promtool) return
      yield* Metric.update(
        Metric.summary({
          name: "ptest_c_summary",
          maxAge: "1 minute",
          maxSize: 10,
          error: 0.01,
          quantiles: [0.5, 0.99]
        }),
        3
      )
      yield* Metric.update(Metric.frequency("ptest_c_kinds"), "set")
      const check = spawnSync("promtool", ["check", "metrics"], { input: prometheusText(Metric.unsafeSnapshot()) })
      // Exit 0: valid; promtool's lint findings (naming advice) go to stdout with exit 3, syntax errors exit 1.
      expect([0, 3], `${check.stdout}${check.stderr}`).toContain(check.status)
      expect(`${check.stderr}`).not.toMatch(/error/i)
    })
  )
})
