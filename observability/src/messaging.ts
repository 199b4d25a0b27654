/**
 * Span conventions for NATS messaging, following the OpenTelemetry messaging semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/messaging/messaging-spans/).
 *
 * One place that names the spans Reef's kernel creates, so the README, the dashboards and the kernel agree:
 *   - `send <subject>`    kind producer, `messaging.operation.type=send`
 *   - `receive <subject>` kind consumer, `messaging.operation.type=receive` (pull: the fetch itself)
 *   - `process <subject>` kind consumer, `messaging.operation.type=process` (handling one delivered message;
 *     its parent is the producer's span, taken from the message's `traceparent` header)
 * all with `messaging.system=nats` and `messaging.destination.name=<subject>`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"

export const ATTR_MESSAGING_SYSTEM = "messaging.system"
export const ATTR_MESSAGING_DESTINATION_NAME = "messaging.destination.name"
export const ATTR_MESSAGING_OPERATION_TYPE = "messaging.operation.type"
export const ATTR_MESSAGING_OPERATION_NAME = "messaging.operation.name"
export const ATTR_MESSAGING_MESSAGE_ID = "messaging.message.id"
export const ATTR_MESSAGING_MESSAGE_BODY_SIZE = "messaging.message.body.size"
export const MESSAGING_SYSTEM_NATS = "nats"

/** Messaging operation types Reef uses (a subset of the semconv `messaging.operation.type` values). */
export type MessagingOperation = "send" | "receive" | "process"

const kindOf: Record<MessagingOperation, Tracer.SpanKind> = {
  send: "producer",
  receive: "consumer",
  process: "consumer"
}

export interface MessagingSpanOptions {
  /** Remote parent, e.g. from `parentSpanFromTraceparent(headers.get("traceparent"))` on the process side. */
  readonly parent?: Tracer.AnySpan | undefined
  /** Extra attributes (e.g. `messaging.message.id`, `reef.actor.id` of the peer). */
  readonly attributes?: Record<string, unknown> | undefined
  readonly links?: ReadonlyArray<Tracer.SpanLink> | undefined
}

/** Name and `Effect.withSpan` options of a messaging span: `Effect.withSpan(span.name, span.options)`. */
export const messagingSpan = (
  operation: MessagingOperation,
  subject: string,
  options: MessagingSpanOptions = {}
): { readonly name: string; readonly options: Tracer.SpanOptions } => ({
  name: `${operation} ${subject}`,
  options: {
    kind: kindOf[operation],
    // A stack trace per message costs more than the rest of the send path; the span name says where it is.
    captureStackTrace: false,
    ...(options.parent === undefined ? {} : { parent: options.parent }),
    ...(options.links === undefined ? {} : { links: options.links }),
    attributes: {
      ...options.attributes,
      [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM_NATS,
      [ATTR_MESSAGING_DESTINATION_NAME]: subject,
      [ATTR_MESSAGING_OPERATION_TYPE]: operation,
      [ATTR_MESSAGING_OPERATION_NAME]: operation
    }
  }
})

/**
 * Whether spans are recorded and exported. Provided as `true` by ObservabilityLive (when it exports) and
 * ObservabilityTest; `false` by default. When false, messaging spans are not created at all (an Effect span
 * costs ~10 µs, more than the rest of a NATS publish) but a received parent is still installed, so sends
 * made while handling a message carry the sender's trace context on to the next actor.
 */
export class MessagingTracing extends Context.Reference<MessagingTracing>()("@reef/observability/MessagingTracing", {
  defaultValue: () => false
}) {}

/** Runs `self` inside a messaging span (see `messagingSpan`) when tracing is on. Data-last, for `pipe`. */
export const withMessagingSpan =
  (operation: MessagingOperation, subject: string, options?: MessagingSpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Tracer.ParentSpan>> =>
    Effect.flatMap(MessagingTracing, (enabled) => {
      if (enabled) {
        const span = messagingSpan(operation, subject, options)
        return Effect.withSpan(self, span.name, span.options)
      }
      return options?.parent === undefined
        ? (self as Effect.Effect<A, E, Exclude<R, Tracer.ParentSpan>>)
        : Effect.withParentSpan(self, options.parent)
    })
