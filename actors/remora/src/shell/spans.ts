/**
 * Spans recorded from plain callbacks (timers, NATS handlers, the cores' outputs), not from fibers: a span is
 * started and ended with explicit times through the tracer's own API, so the hot paths never build a fiber for
 * it. With tracing off (`enabled` false) nothing is created and `traceparent` is "".
 */
import { formatTraceparent, parentSpanFromTraceparent } from "@reef/observability/tracing"
import * as Context from "effect/Context"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"

export const nowNs = (): bigint => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6))

export interface SpanOptions {
  /** W3C traceparent of the parent ("" for a new trace). */
  readonly parent?: string | undefined
  readonly parentSpan?: Tracer.Span | undefined
  readonly kind?: Tracer.SpanKind
  readonly startNs?: bigint
  readonly attributes?: Record<string, unknown>
  readonly links?: ReadonlyArray<Tracer.SpanLink>
}

export class SpanRecorder {
  constructor(
    private readonly tracer: Tracer.Tracer | undefined,
    readonly enabled: boolean
  ) {}

  start(name: string, options: SpanOptions = {}): Tracer.Span | undefined {
    if (!this.enabled || this.tracer === undefined) return undefined
    const parent: Option.Option<Tracer.AnySpan> =
      options.parentSpan !== undefined
        ? Option.some(options.parentSpan)
        : options.parent
          ? parentSpanFromTraceparent(options.parent)
          : Option.none()
    const span = this.tracer.span(
      name,
      parent,
      Context.empty(),
      options.links ?? [],
      options.startNs ?? nowNs(),
      options.kind ?? "internal"
    )
    // The tracer ignores attributes given at creation: they are set one by one.
    for (const [key, value] of Object.entries(options.attributes ?? {})) span.attribute(key, value)
    return span
  }

  /** A span that already happened (start and end known). */
  record(name: string, startNs: bigint, options: SpanOptions = {}): Tracer.Span | undefined {
    const span = this.start(name, { ...options, startNs })
    span?.end(nowNs(), Exit.void)
    return span
  }

  end(span: Tracer.Span | undefined, attributes: Record<string, unknown> = {}): void {
    if (span === undefined) return
    for (const [key, value] of Object.entries(attributes)) span.attribute(key, value)
    span.end(nowNs(), Exit.void)
  }
}

export const traceparentOf = (span: Tracer.Span | undefined): string =>
  span === undefined ? "" : formatTraceparent({ traceId: span.traceId, spanId: span.spanId, sampled: span.sampled })

export const linkTo = (span: Tracer.Span): Tracer.SpanLink => ({ _tag: "SpanLink", span, attributes: {} })
