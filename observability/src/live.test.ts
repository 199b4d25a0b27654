import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { ObservabilityLive } from "./live.js"
import { withMessagingSpan } from "./messaging.js"
import { startOtlpReceiver } from "./otlpReceiver.js"
import { currentTraceContext } from "./propagation.js"

const REMOTE_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const REMOTE_SPAN_ID = "00f067aa0ba902b7"

/** What an actor does: a server span with a producer child, and a consumer span continuing a remote trace. */
const actorWork = Effect.gen(function* () {
  yield* Effect.void.pipe(
    withMessagingSpan("send", "reef.replica.r-1.inbox"),
    Effect.withSpan("handle Submit", { kind: "server", attributes: { "reef.request.id": "req-1", "reef.size": 3 } })
  )
  yield* Effect.void.pipe(
    withMessagingSpan("process", "reef.gateway.in", {
      parent: Tracer.externalSpan({ traceId: REMOTE_TRACE_ID, spanId: REMOTE_SPAN_ID })
    })
  )
})

describe("ObservabilityLive", () => {
  it.scopedLive("exports spans over OTLP/HTTP JSON to OTEL_EXPORTER_OTLP_ENDPOINT, flushed when the layer closes", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver()
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test" }

      yield* actorWork.pipe(Effect.provide(ObservabilityLive({ role: "gateway", id: "gw-1", version: "0.1.0", env })))

      // The BatchSpanProcessor's delay (5 s) has not passed: these arrived through the flush on layer close.
      const spans = yield* receiver.spans
      expect(spans.map((span) => span.name).sort()).toEqual([
        "handle Submit",
        "process reef.gateway.in",
        "send reef.replica.r-1.inbox"
      ])
      const server = spans.find((span) => span.name === "handle Submit")!
      const send = spans.find((span) => span.name === "send reef.replica.r-1.inbox")!
      const process = spans.find((span) => span.name === "process reef.gateway.in")!

      for (const span of spans) {
        expect(span.serviceName).toBe("reef-gateway")
        expect(span.resourceAttributes).toMatchObject({
          "service.name": "reef-gateway",
          "service.version": "0.1.0",
          "service.instance.id": "gw-1",
          "reef.actor.id": "gw-1",
          "reef.role": "gateway",
          "deployment.environment": "test"
        })
        expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
        expect(span.spanId).toMatch(/^[0-9a-f]{16}$/)
      }
      expect(server).toMatchObject({ kind: "server", parentSpanId: undefined })
      expect(server.attributes).toMatchObject({ "reef.request.id": "req-1", "reef.size": 3 })
      expect(send).toMatchObject({ kind: "producer", traceId: server.traceId, parentSpanId: server.spanId })
      expect(send.attributes).toMatchObject({
        "messaging.system": "nats",
        "messaging.destination.name": "reef.replica.r-1.inbox",
        "messaging.operation.type": "send"
      })
      expect(process).toMatchObject({ kind: "consumer", traceId: REMOTE_TRACE_ID, parentSpanId: REMOTE_SPAN_ID })
    })
  )

  it.scopedLive("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_SERVICE_NAME are honoured", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver()
      const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl, OTEL_SERVICE_NAME: "custom-name" }
      yield* Effect.withSpan(Effect.void, "work").pipe(Effect.provide(ObservabilityLive({ role: "nic", id: "n", env })))
      const spans = yield* receiver.spans
      expect(spans.map((span) => [span.name, span.serviceName])).toEqual([["work", "custom-name"]])
    })
  )

  it.scopedLive("OTEL_SDK_DISABLED=true exports nothing but spans still carry trace ids", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver()
      const env = { OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }
      const context = yield* currentTraceContext.pipe(
        Effect.withSpan("work"),
        Effect.provide(ObservabilityLive({ role: "gateway", id: "gw-1", env }))
      )
      expect(Option.isSome(context)).toBe(true)
      expect(yield* receiver.spans).toEqual([])
      expect(yield* receiver.requests).toBe(0)
    })
  )

  it.scopedLive("without an endpoint the layer is a no-op", () =>
    Effect.gen(function* () {
      const tracerBefore = yield* Effect.tracer
      const tracerInside = yield* Effect.tracer.pipe(Effect.provide(ObservabilityLive({ role: "g", id: "g", env: {} })))
      expect(tracerInside).toBe(tracerBefore)
    })
  )
})
