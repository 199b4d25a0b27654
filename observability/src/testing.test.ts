import { describe, expect, it } from "@effect/vitest"
import { SpanKind } from "@opentelemetry/api"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { messagingSpan, withMessagingSpan } from "./messaging.js"
import { currentTraceContext, currentTraceparent, parentSpanFromTraceparent } from "./propagation.js"
import { ObservabilityTest, TestSpans } from "./testing.js"
import { parseTraceparent } from "./traceparent.js"

const REMOTE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

const spanNamed = (name: string) =>
  Effect.flatMap(TestSpans, ({ spans }) =>
    Effect.map(spans, (all) => {
      const span = all.find((candidate) => candidate.name === name)
      if (span === undefined) throw new Error(`no span named ${name}; have ${all.map((s) => s.name).join(", ")}`)
      return span
    })
  )

describe("ObservabilityTest", () => {
  it.effect("captures Effect.withSpan spans with attributes, kind, resource and parent/child", () =>
    Effect.gen(function* () {
      yield* Effect.void.pipe(
        Effect.withSpan("child", { kind: "client", attributes: { "reef.step": 2 } }),
        Effect.withSpan("parent", { kind: "server", attributes: { "reef.request": "r-1", "reef.ok": true } })
      )
      const parent = yield* spanNamed("parent")
      const child = yield* spanNamed("child")

      expect(parent.kind).toBe(SpanKind.SERVER)
      expect(parent.attributes).toMatchObject({ "reef.request": "r-1", "reef.ok": true })
      expect(parent.parentSpanContext).toBeUndefined()
      expect(parent.resource.attributes).toMatchObject({ "service.name": "reef-test", "reef.role": "test" })

      expect(child.kind).toBe(SpanKind.CLIENT)
      expect(child.attributes).toMatchObject({ "reef.step": 2 })
      expect(child.spanContext().traceId).toBe(parent.spanContext().traceId)
      expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId)
    }).pipe(Effect.provide(ObservabilityTest))
  )

  it.effect("reset forgets recorded spans; each layer build starts empty", () =>
    Effect.gen(function* () {
      const testSpans = yield* TestSpans
      expect(yield* testSpans.spans).toEqual([])
      yield* Effect.withSpan(Effect.void, "one")
      expect(yield* testSpans.spans).toHaveLength(1)
      yield* testSpans.reset
      expect(yield* testSpans.spans).toEqual([])
    }).pipe(Effect.provide(ObservabilityTest))
  )

  it.effect("a span whose parent is an external span from a traceparent keeps that trace id", () =>
    Effect.gen(function* () {
      const remote = Option.getOrThrow(parseTraceparent(REMOTE))
      // Plain Effect API, as the kernel uses it.
      const parent = Tracer.externalSpan({ traceId: remote.traceId, spanId: remote.spanId, sampled: remote.sampled })
      yield* Effect.withSpan(Effect.void, "process reef.x", { kind: "consumer", parent })
      // The helper, which also carries the sampled flag.
      yield* Effect.withSpan(Effect.void, "helper", { parent: Option.getOrThrow(parentSpanFromTraceparent(REMOTE)) })

      for (const name of ["process reef.x", "helper"]) {
        const span = yield* spanNamed(name)
        expect(span.spanContext().traceId).toBe(remote.traceId)
        expect(span.parentSpanContext?.spanId).toBe(remote.spanId)
        expect(span.parentSpanContext?.isRemote).toBe(true)
      }
    }).pipe(Effect.provide(ObservabilityTest))
  )

  it.effect("an unsampled remote parent is honoured through parentSpanFromTraceparent", () =>
    Effect.gen(function* () {
      const unsampled = REMOTE.replace(/-01$/, "-00")
      const inner = yield* currentTraceContext.pipe(
        Effect.withSpan("not recorded", { parent: Option.getOrThrow(parentSpanFromTraceparent(unsampled)) })
      )
      expect(Option.map(inner, (c) => c.sampled)).toEqual(Option.some(false))
      expect(yield* Effect.flatMap(TestSpans, (t) => t.spans)).toEqual([])
    }).pipe(Effect.provide(ObservabilityTest))
  )

  it.effect("currentTraceparent is the header of the current span, none outside spans", () =>
    Effect.gen(function* () {
      expect(yield* currentTraceparent).toEqual(Option.none())
      const header = yield* currentTraceparent.pipe(Effect.withSpan("send reef.y", { kind: "producer" }))
      const span = yield* spanNamed("send reef.y")
      expect(header).toEqual(Option.some(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`))
    }).pipe(Effect.provide(ObservabilityTest))
  )

  it.effect("messaging spans: send (producer) -> traceparent -> process (consumer) share one trace", () =>
    Effect.gen(function* () {
      const subject = "reef.actor.nic-1.inbox"
      const header = yield* currentTraceparent.pipe(withMessagingSpan("send", subject))
      const parent = Option.getOrUndefined(Option.flatMap(header, parentSpanFromTraceparent))
      yield* Effect.void.pipe(
        withMessagingSpan("process", subject, { parent, attributes: { "messaging.message.id": "m-1" } })
      )

      const send = yield* spanNamed(`send ${subject}`)
      const process = yield* spanNamed(`process ${subject}`)
      expect(send.kind).toBe(SpanKind.PRODUCER)
      expect(process.kind).toBe(SpanKind.CONSUMER)
      expect(send.attributes).toEqual({
        "messaging.system": "nats",
        "messaging.destination.name": subject,
        "messaging.operation.type": "send",
        "messaging.operation.name": "send"
      })
      expect(process.attributes).toMatchObject({
        "messaging.system": "nats",
        "messaging.operation.type": "process",
        "messaging.message.id": "m-1"
      })
      expect(process.spanContext().traceId).toBe(send.spanContext().traceId)
      expect(process.parentSpanContext?.spanId).toBe(send.spanContext().spanId)
    }).pipe(Effect.provide(ObservabilityTest))
  )

  it("messagingSpan lets caller attributes not override the conventions", () => {
    const span = messagingSpan("receive", "s", { attributes: { "messaging.system": "kafka", extra: 1 } })
    expect(span.name).toBe("receive s")
    expect(span.options.kind).toBe("consumer")
    expect(span.options.attributes).toMatchObject({ "messaging.system": "nats", extra: 1 })
  })
})
