/**
 * The sending side of the kernel: tell, ask, broadcast to a role, delivery to any one instance of a role,
 * and batched tells. Every send is a `send <subject>` producer span whose context travels in the
 * `traceparent` header, so the receiving actor's `process` span joins the same trace.
 */

import {
  ATTR_REEF_ASK,
  ATTR_REEF_MESSAGE_TYPE,
  currentTraceparent,
  formatTraceparent,
  MessagingTracing,
  traceContextOf,
  withMessagingSpan
} from "@reef/observability/tracing"
import { type ActorAddress, EnvelopeBatch, ErrorDetail } from "@reef/proto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import type { Rpc } from "./actor.js"
import { encodeBatch } from "./batch-codec.js"
import { Bus, type BusMessage, FixedHeaders, type Headers } from "./bus.js"
import { type Codec, decodeAs, encodeChecked } from "./codec.js"
import { KernelConfig } from "./config.js"
import {
  type AskError,
  InvalidAddressError,
  MalformedMessageError,
  OversizedMessageError,
  RemoteError,
  type SendError
} from "./errors.js"
import { ERROR_HEADER, TRACEPARENT_HEADER, TYPE_HEADER } from "./headers.js"
import { actorSubject, addressProblem, anyInstanceSubject, broadcastSubject, isValidToken } from "./subjects.js"

export interface AskOptions {
  readonly timeoutMs?: number
}

export interface MessengerShape {
  readonly tell: <A>(to: ActorAddress, codec: Codec<A>, message: A) => Effect.Effect<void, SendError>
  /** Many messages to one actor in one NATS message (an EnvelopeBatch): for hot paths. */
  readonly tellMany: <A>(
    to: ActorAddress,
    codec: Codec<A>,
    messages: ReadonlyArray<A>
  ) => Effect.Effect<void, SendError>
  /** To exactly one instance of `role` (NATS queue group). */
  readonly tellAny: <A>(role: string, codec: Codec<A>, message: A) => Effect.Effect<void, SendError>
  /** To every instance of `role`. */
  readonly broadcast: <A>(role: string, codec: Codec<A>, message: A) => Effect.Effect<void, SendError>
  readonly ask: <A, B>(
    to: ActorAddress,
    protocol: Rpc<A, B>,
    message: A,
    options?: AskOptions
  ) => Effect.Effect<B, AskError>
  readonly askAny: <A, B>(
    role: string,
    protocol: Rpc<A, B>,
    message: A,
    options?: AskOptions
  ) => Effect.Effect<B, AskError>
}

export class Messenger extends Context.Tag("@reef/kernel/Messenger")<Messenger, MessengerShape>() {}

const typeAttribute = (type: string, bytes: number) => ({
  [ATTR_REEF_MESSAGE_TYPE]: type,
  "messaging.message.body.size": bytes
})

/** Headers of an outgoing message: its type and the current span's trace context. */
const outgoingHeaders = (type: string) =>
  Effect.map(currentTraceparent, (traceparent) => {
    const headers = new Map([[TYPE_HEADER, type]])
    if (Option.isSome(traceparent)) headers.set(TRACEPARENT_HEADER, traceparent.value)
    return headers
  })

/**
 * Runs `traced()` when messaging spans are recorded, otherwise `untraced(parent)` with the span the fiber is in
 * (if any), whose context an untraced send still passes on. One look at the fiber instead of an Effect step
 * for the flag and another for the parent: sends are hot paths.
 */
const whenTracing = <A, E, R>(
  traced: () => Effect.Effect<A, E, R>,
  untraced: (parent: Tracer.AnySpan | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    Context.get(fiber.currentContext, MessagingTracing) ? traced() : untraced(fiber.currentSpan)
  )

/** Decodes an ask's reply: an ErrorDetail becomes RemoteError; a reply of another type is malformed. */
export const decodeReply = <B>(subject: string, codec: Codec<B>, reply: BusMessage): Effect.Effect<B, AskError> => {
  if (reply.headers.get(ERROR_HEADER) === "1") {
    return Either.match(decodeAs(ErrorDetail, reply.data, subject), {
      onLeft: (error) => Effect.fail(error),
      onRight: (detail) => Effect.fail(new RemoteError({ subject, detail }))
    })
  }
  const type = reply.headers.get(TYPE_HEADER)
  if (type !== codec.$type) {
    return Effect.fail(
      new MalformedMessageError({ type: codec.$type, subject, cause: `reply has type "${type ?? ""}"` })
    )
  }
  return decodeAs(codec, reply.data, subject)
}

export const makeMessenger = Effect.gen(function* () {
  const bus = yield* Bus
  const config = yield* KernelConfig

  // Address checks and encoding happen when a send is made (both are pure), so a send that cannot go out is
  // one failed Effect and one that can is no more steps than its publish or request: sends are hot paths.
  const checked = <A, E>(problem: string | undefined, send: () => Effect.Effect<A, E>) =>
    problem === undefined ? send() : Effect.fail(new InvalidAddressError({ reason: problem }))
  const roleProblem = (role: string) => (isValidToken(role) ? undefined : `invalid role "${role}"`)

  const encode = <A>(codec: Codec<A>, message: A) => encodeChecked(codec, message, config.maxPayloadBytes)

  // A message sent with no trace context carries only its type: one fixed header set per type.
  const typeOnlyHeaders = new Map<string, Headers>()
  const headersFor = (type: string, parent: Tracer.AnySpan | undefined): Headers => {
    if (parent !== undefined) {
      return new Map([
        [TYPE_HEADER, type],
        [TRACEPARENT_HEADER, formatTraceparent(traceContextOf(parent))]
      ])
    }
    let headers = typeOnlyHeaders.get(type)
    if (headers === undefined) {
      headers = new FixedHeaders([[TYPE_HEADER, type]])
      typeOnlyHeaders.set(type, headers)
    }
    return headers
  }

  const publish = (subject: string, type: string, bytes: Uint8Array, attributes: Record<string, unknown> = {}) =>
    whenTracing(
      () =>
        outgoingHeaders(type).pipe(
          Effect.flatMap((headers) => bus.publish(subject, bytes, headers)),
          withMessagingSpan("send", subject, { attributes: { ...typeAttribute(type, bytes.length), ...attributes } })
        ),
      (parent) => bus.publish(subject, bytes, headersFor(type, parent))
    )

  const tellSubject = <A>(subject: string, codec: Codec<A>, message: A): Effect.Effect<void, SendError> => {
    const bytes = encode(codec, message)
    return Either.isLeft(bytes) ? Effect.fail(bytes.left) : publish(subject, codec.$type, bytes.right)
  }

  const askSubject = <A, B>(
    subject: string,
    protocol: Rpc<A, B>,
    message: A,
    options: AskOptions | undefined
  ): Effect.Effect<B, AskError> => {
    const bytes = encode(protocol.request, message)
    if (Either.isLeft(bytes)) return Effect.fail(bytes.left)
    const timeoutMs = options?.timeoutMs ?? config.askTimeoutMs
    const type = protocol.request.$type
    const decode = (reply: BusMessage) => decodeReply(subject, protocol.reply, reply)
    return whenTracing(
      () =>
        outgoingHeaders(type).pipe(
          Effect.flatMap((headers) => bus.request(subject, bytes.right, headers, timeoutMs)),
          Effect.flatMap(decode),
          withMessagingSpan("send", subject, {
            attributes: { ...typeAttribute(type, bytes.right.length), [ATTR_REEF_ASK]: true }
          })
        ),
      (parent) => Effect.flatMap(bus.request(subject, bytes.right, headersFor(type, parent), timeoutMs), decode)
    )
  }

  return Messenger.of({
    tell: (to, codec, message) => checked(addressProblem(to), () => tellSubject(actorSubject(to), codec, message)),
    tellMany: (to, codec, messages) =>
      checked(addressProblem(to), (): Effect.Effect<void, SendError> => {
        if (messages.length === 0) return Effect.void
        const bytes = encodeBatch(codec, messages)
        if (bytes.length > config.maxPayloadBytes) {
          return Effect.fail(
            new OversizedMessageError({
              type: EnvelopeBatch.$type,
              sizeBytes: bytes.length,
              limitBytes: config.maxPayloadBytes
            })
          )
        }
        return publish(actorSubject(to), EnvelopeBatch.$type, bytes, {
          "messaging.batch.message_count": messages.length
        })
      }),
    tellAny: (role, codec, message) =>
      checked(roleProblem(role), () => tellSubject(anyInstanceSubject(config.cluster, role), codec, message)),
    broadcast: (role, codec, message) =>
      checked(roleProblem(role), () => tellSubject(broadcastSubject(config.cluster, role), codec, message)),
    ask: (to, protocol, message, options) =>
      checked(addressProblem(to), () => askSubject(actorSubject(to), protocol, message, options)),
    askAny: (role, protocol, message, options) =>
      checked(roleProblem(role), () => askSubject(anyInstanceSubject(config.cluster, role), protocol, message, options))
  })
})

export const messengerLayer: Layer.Layer<Messenger, never, Bus | KernelConfig> = Layer.effect(Messenger, makeMessenger)
