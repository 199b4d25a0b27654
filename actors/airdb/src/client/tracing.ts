/**
 * AirDB's spans: created only when tracing is on (MessagingTracing, set by ObservabilityLive when it
 * exports), since an Effect span costs more than many of the operations it would describe.
 */
import { MessagingTracing } from "@reef/observability/tracing"
import * as Effect from "effect/Effect"

export interface SpanHandle {
  readonly attribute: (key: string, value: unknown) => void
}

/** Runs `f` in a span named `name` (airdb.*) when tracing is on; `f` gets the span to add attributes to. */
export const traced = <A, E, R>(
  name: string,
  attributes: Record<string, unknown>,
  f: (span: SpanHandle | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.flatMap(MessagingTracing, (on) =>
    on ? Effect.useSpan(name, { attributes, captureStackTrace: false }, (span) => f(span)) : f(undefined)
  )
