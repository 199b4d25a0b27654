/**
 * `ObservabilityLive`: the Layer that turns the Effect spans of an actor into exported OpenTelemetry spans,
 * and exports its Effect metrics over OTLP when an endpoint is configured.
 *
 * Actors only use Effect's tracing API (`Effect.withSpan`, `Tracer.externalSpan`); providing this layer backs
 * that API with an OTel tracer whose exporter is chosen from the `OTEL_*` environment (see `config.ts`).
 * Metrics take Effect's own OTLP path (`@effect/opentelemetry/OtlpMetrics`: the registry every actor already
 * updates, over `fetch`), loaded only when exported; the `/metrics` scrape endpoint is separate (metrics-server.ts).
 * When tracing is off the layer is empty: Effect keeps its built-in tracer (spans and trace ids still exist, so
 * `traceparent` propagation keeps working through this actor), and no SDK, exporter or timer is created.
 */
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import {
  type ActorIdentity,
  type Env,
  type ObservabilityConfig,
  resolveObservabilityConfig,
  type TraceExporterConfig
} from "./config.js"

export interface ObservabilityOptions extends ActorIdentity {
  /** Where the `OTEL_*` variables are read from; defaults to `process.env`. Tests pass their own. */
  readonly env?: Env | undefined
  /** Upper bound on flush + shutdown when the layer closes; default 3 seconds. */
  readonly shutdownTimeout?: Duration.DurationInput | undefined
}

const DEFAULT_SHUTDOWN_TIMEOUT = Duration.seconds(3)

/** The SDK is loaded only when something is exported, so a process with tracing off never pays for it. */
const loadSdk = () =>
  Effect.promise(() =>
    Promise.all([
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/sdk-trace-base"),
      import("./internal/otelTracer.js")
    ])
  ).pipe(
    Effect.map(
      ([
        { OTLPTraceExporter },
        { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor },
        { otelTracerLayer }
      ]) => ({
        OTLPTraceExporter,
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
        otelTracerLayer
      })
    )
  )

type Sdk = Effect.Effect.Success<ReturnType<typeof loadSdk>>

const makeProcessor = (
  { OTLPTraceExporter, BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor }: Sdk,
  exporter: TraceExporterConfig
): SpanProcessor => {
  switch (exporter._tag) {
    case "Otlp":
      // Batches in the background; the provider's shutdown flushes what is left.
      return new BatchSpanProcessor(new OTLPTraceExporter({ url: exporter.url }))
    case "Console":
      // Console output is for debugging: print each span as it ends, like the OTel NodeSDK does.
      return new SimpleSpanProcessor(new ConsoleSpanExporter())
  }
}

const describe = (exporter: TraceExporterConfig): string =>
  exporter._tag === "Otlp" ? `OTLP/HTTP JSON to ${exporter.url}` : "console"

const tracingLayer = (config: ObservabilityConfig, shutdownTimeout: Duration.DurationInput) =>
  Effect.gen(function* () {
    if (!Arr.isNonEmptyReadonlyArray(config.exporters)) {
      yield* Effect.logDebug(`observability: tracing off (${config.disabledReason ?? "no exporter"})`)
      return Layer.empty
    }
    yield* Effect.logDebug(
      `observability: ${config.resource.serviceName} exports traces via ${config.exporters.map(describe).join(", ")}`
    )
    const sdk = yield* loadSdk()
    const processors = Arr.map(config.exporters, (exporter) => makeProcessor(sdk, exporter))
    return sdk.otelTracerLayer(config.resource, processors, shutdownTimeout)
  })

const metricsLayer = (config: ObservabilityConfig, shutdownTimeout: Duration.DurationInput) =>
  Effect.gen(function* () {
    const otlp = config.metrics.otlp
    if (otlp === undefined) {
      yield* Effect.logDebug(`observability: OTLP metrics off (${config.metrics.disabledReason ?? "no exporter"})`)
      return Layer.empty
    }
    yield* Effect.logDebug(
      `observability: ${config.resource.serviceName} exports metrics via OTLP/HTTP (${otlp.protocol}) to ${otlp.url} every ${otlp.intervalMs} ms`
    )
    const [OtlpMetrics, OtlpSerialization, FetchHttpClient, { sampleProcessMetrics }] = yield* Effect.promise(() =>
      Promise.all([
        import("@effect/opentelemetry/OtlpMetrics"),
        import("@effect/opentelemetry/OtlpSerialization"),
        import("@effect/platform/FetchHttpClient"),
        import("./metrics-server.js")
      ])
    )
    const { serviceName, serviceVersion, attributes } = config.resource
    // Process gauges are read on demand (a scrape reads them too); an export needs them fresh as well.
    const sampling = Layer.scopedDiscard(
      Effect.sync(sampleProcessMetrics).pipe(
        Effect.repeat(Schedule.spaced(Duration.millis(otlp.intervalMs))),
        Effect.forkScoped
      )
    )
    return OtlpMetrics.layer({
      url: otlp.url,
      resource: { serviceName, ...(serviceVersion === undefined ? {} : { serviceVersion }), attributes },
      exportInterval: Duration.millis(otlp.intervalMs),
      shutdownTimeout
    }).pipe(
      Layer.provide(otlp.protocol === "http/protobuf" ? OtlpSerialization.layerProtobuf : OtlpSerialization.layerJson),
      Layer.provide(FetchHttpClient.layer),
      Layer.merge(sampling)
    )
  })

/**
 * Tracing and OTLP metrics for one actor process, configured from `OTEL_*` variables; flushes and shuts down on
 * scope close.
 */
export const ObservabilityLive = (options: ObservabilityOptions): Layer.Layer<never> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = resolveObservabilityConfig(options, options.env ?? process.env)
      for (const warning of config.warnings) yield* Effect.logWarning(`observability: ${warning}`)
      const shutdownTimeout = options.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT
      const tracing = yield* tracingLayer(config, shutdownTimeout)
      const metrics = yield* metricsLayer(config, shutdownTimeout)
      return Layer.merge(tracing, metrics)
    })
  )
