/**
 * Metrics leave the process both ways: scraped from `/metrics` (Prometheus text) and pushed over OTLP/HTTP to a
 * receiver, each from the same Effect registry the actors update.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import { ObservabilityLive } from "./live.js"
import { serveMetrics } from "./metrics-server.js"
import { startOtlpReceiver } from "./otlpReceiver.js"

const get = (url: string, init?: RequestInit) =>
  Effect.promise(() =>
    fetch(url, init).then(async (r) => ({
      status: r.status,
      type: r.headers.get("content-type"),
      body: await r.text()
    }))
  )

describe("metrics export", () => {
  it.live("/metrics serves the registry and the process's memory and CPU", () =>
    Effect.gen(function* () {
      yield* Metric.incrementBy(
        Metric.counter("mtest_scraped_total", { incremental: true }).pipe(Metric.tagged("actor", "c1")),
        5
      )
      const server = yield* serveMetrics({ port: 0 })
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      const page = yield* get(server.url)
      expect(page.status).toBe(200)
      expect(page.type).toContain("text/plain; version=0.0.4")
      expect(page.body).toContain('mtest_scraped_total{actor="c1"} 5')
      expect(page.body).toMatch(/^process_resident_memory_bytes \d+/m)
      expect(page.body).toMatch(/^process_cpu_seconds_total [\d.]+/m)
      expect((yield* get(server.url.replace("/metrics", "/"))).status).toBe(404)
      expect((yield* get(server.url, { method: "POST" })).status).toBe(405)
    }).pipe(Effect.scoped)
  )

  it.live("a port in use is a typed error naming it", () =>
    Effect.gen(function* () {
      const first = yield* serveMetrics({ port: 0 })
      const error = yield* Effect.flip(serveMetrics({ port: first.port }))
      expect(error._tag).toBe("MetricsServerError")
      expect(error.message).toContain(`127.0.0.1:${first.port}: EADDRINUSE`)
    }).pipe(Effect.scoped)
  )

  it.live("OTLP metrics reach a receiver with the actor's resource", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver()
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_METRIC_EXPORT_INTERVAL: "100",
        OTEL_TRACES_EXPORTER: "none"
      }
      yield* Effect.gen(function* () {
        yield* Metric.incrementBy(
          Metric.counter("mtest_pushed_total", { incremental: true }).pipe(Metric.tagged("actor", "c2")),
          2
        )
        const points = yield* receiver
          .waitForMetrics((ps) => ps.some((p) => p.name === "mtest_pushed_total"))
          .pipe(Effect.timeout("10 seconds"))
        const pushed = points.find((p) => p.name === "mtest_pushed_total")!
        expect(pushed).toMatchObject({
          kind: "sum",
          serviceName: "reef-counter",
          value: 2,
          attributes: { actor: "c2" }
        })
        // The process gauges are sampled for export too.
        expect(points.some((p) => p.name === "process_resident_memory_bytes" && p.value > 0)).toBe(true)
      }).pipe(Effect.provide(Layer.fresh(ObservabilityLive({ role: "counter", id: "c2", env }))))
    }).pipe(Effect.scoped)
  )
})
