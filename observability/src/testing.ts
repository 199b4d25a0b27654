/**
 * `ObservabilityTest`: an OTel-backed tracer whose spans stay in memory, for assertions in tests.
 *
 * Spans are recorded by a `SimpleSpanProcessor` as soon as they end. Read them through the `TestSpans` service
 * while the layer is still open: the in-memory exporter is emptied when the provider shuts down.
 */
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ActorIdentity, resolveObservabilityConfig } from "./config.js"
import { otelTracerLayer } from "./internal/otelTracer.js"

export type { ReadableSpan } from "@opentelemetry/sdk-trace-base"

/** Finished spans of the current `ObservabilityTest` layer, in the order they ended. */
export class TestSpans extends Context.Tag("@reef/observability/TestSpans")<
  TestSpans,
  {
    readonly spans: Effect.Effect<ReadonlyArray<ReadableSpan>>
    /** Forgets the spans recorded so far. */
    readonly reset: Effect.Effect<void>
  }
>() {}

/** Identity used for the test resource unless `makeObservabilityTest` is given another. */
export const TEST_ACTOR: ActorIdentity = { role: "test", id: "test-0" }

/** A fresh in-memory tracer per layer build, with resource attributes as `ObservabilityLive` would set them. */
export const makeObservabilityTest = (identity: ActorIdentity = TEST_ACTOR): Layer.Layer<TestSpans> =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const exporter = new InMemorySpanExporter()
      const { resource } = resolveObservabilityConfig(identity, {})
      const spans = TestSpans.of({
        spans: Effect.sync(() => exporter.getFinishedSpans().slice()),
        reset: Effect.sync(() => exporter.reset())
      })
      return Layer.merge(
        Layer.succeed(TestSpans, spans),
        otelTracerLayer(resource, [new SimpleSpanProcessor(exporter)], "1 second")
      )
    })
  )

export const ObservabilityTest: Layer.Layer<TestSpans> = makeObservabilityTest()
