/**
 * Trace context propagation between Effect spans and `traceparent` headers.
 *
 * Send side: `currentTraceparent` gives the header for the span the current fiber is in.
 * Receive side: `parentSpanFromTraceparent` turns a received header into the `parent` of an `Effect.withSpan`.
 *
 * Why not plain `Tracer.externalSpan({ traceId, spanId, sampled })`? It works for ids, but
 * `@effect/opentelemetry` ignores its `sampled` field and reads the W3C trace-flags from the span's context
 * (defaulting to sampled). `parentSpanFromTraceparent` puts the flags there, so an unsampled upstream trace stays
 * unsampled downstream, with or without the OpenTelemetry tracer installed.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { formatTraceparent, parseTraceparent, type TraceContext } from "./traceparent.js"

const TRACE_FLAGS_SAMPLED = 0x01
const TRACE_FLAGS_NONE = 0x00

/** The propagated identity of any Effect span (an OTel-backed span, a native one or an external parent). */
export const traceContextOf = (span: Tracer.AnySpan): TraceContext => ({
  traceId: span.traceId,
  spanId: span.spanId,
  sampled: span.sampled
})

/** Trace context of the span the current fiber runs in, if any. Use its `traceId` to log or correlate. */
export const currentTraceContext: Effect.Effect<Option.Option<TraceContext>> = Effect.map(
  // serviceOption, not currentParentSpan + option: building a NoSuchElementException per send is costly.
  Effect.serviceOption(Tracer.ParentSpan),
  Option.map(traceContextOf)
)

/** `traceparent` header value for the current span, if any: put it in outgoing message headers. */
export const currentTraceparent: Effect.Effect<Option.Option<string>> = Effect.map(
  currentTraceContext,
  Option.map(formatTraceparent)
)

/**
 * The Context key under which `@effect/opentelemetry` reads W3C trace-flags of an external span (what its
 * `makeExternalSpan` writes). Named here instead of importing that module so the kernel's send path does not
 * load the OpenTelemetry API and semantic conventions (~20 MB) in processes that do not trace; a test checks
 * that both build the same span.
 */
const OtelTraceFlags = Context.GenericTag<number>("@effect/opentelemetry/Tracer/OtelTraceFlags")

/** An `ExternalSpan` for a remote parent, carrying its sampled flag where the OTel tracer reads it. */
export const externalSpanFromTraceContext = (context: TraceContext): Tracer.ExternalSpan =>
  Tracer.externalSpan({
    traceId: context.traceId,
    spanId: context.spanId,
    sampled: context.sampled,
    context: Context.make(OtelTraceFlags, context.sampled ? TRACE_FLAGS_SAMPLED : TRACE_FLAGS_NONE)
  })

/**
 * Parses a received `traceparent` header into a span parent; `Option.none()` for a missing or malformed header
 * (start a new trace then). Use it as `Effect.withSpan(name, { kind: "consumer", parent })`.
 */
export const parentSpanFromTraceparent = (header: string | null | undefined): Option.Option<Tracer.ExternalSpan> =>
  Option.map(parseTraceparent(header), externalSpanFromTraceContext)
