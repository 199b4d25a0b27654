/**
 * Bus over a real NATS connection (nats.js 3). The connection reconnects forever after a server restart;
 * subscriptions are re-established by nats.js, so actors resume without being rebuilt.
 */
import type { Msg, NatsConnection } from "@nats-io/nats-core"
import { Svcm } from "@nats-io/services"
import { connect } from "@nats-io/transport-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { constVoid } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Bus, type BusEvent, type BusMessage, guardedListener } from "./bus.js"
import { AskTimeoutError, BusError, UnavailableError } from "./errors.js"
import { ReceivedHeaders, toNatsHeaders } from "./nats-headers.js"
import { type NatsSecurity, natsConnectOptions } from "./nats-security.js"
import { makeReplyInbox } from "./reply-inbox.js"

export interface NatsOptions {
  readonly servers: string
  /** Name shown by the server's connz monitoring. */
  readonly name?: string
  /** How long to keep trying the first connect before failing the layer. */
  readonly connectTimeoutMs?: number
  /** Credentials and TLS; the environment's (nats-security.ts) when absent. */
  readonly security?: NatsSecurity
}

export class Nats extends Context.Tag("@reef/kernel/Nats")<Nats, NatsConnection>() {}

/** How long a release waits for a drain before it gives up and closes instead. */
const RELEASE_TIMEOUT = "2 seconds"

/**
 * Runs a draining release, bounded: a subscription whose iterator nobody consumes any more (its stream's
 * fiber was interrupted first) never finishes draining, and one such wait would hold the whole process at
 * shutdown. Finalizers are uninterruptible, so the wait is made interruptible for the timeout to fire.
 */
const boundedRelease = (drain: () => Promise<void>, fallback: () => void) =>
  Effect.promise(() => drain().catch(fallback)).pipe(
    Effect.interruptible,
    Effect.timeout(RELEASE_TIMEOUT),
    Effect.catchAll(() => Effect.sync(fallback))
  )

/** A scoped NATS connection: retried on start, reconnecting forever, drained on scope close. */
export const natsConnectionLayer = (options: NatsOptions): Layer.Layer<Nats, BusError> =>
  Layer.scoped(
    Nats,
    Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          connect(
            natsConnectOptions(
              {
                servers: options.servers,
                name: options.name ?? "reef",
                maxReconnectAttempts: -1,
                reconnectTimeWait: 250,
                waitOnFirstConnect: false,
                timeout: 2000,
                // Otherwise every request builds two Error objects up front for their stack traces (15% of an ask).
                noAsyncTraces: true
              },
              options.security
            )
          ),
        catch: (cause) => new BusError({ operation: `connect ${options.servers}`, cause })
      }).pipe(
        Effect.retry(
          Schedule.exponential("50 millis", 1.5).pipe(
            Schedule.upTo(`${options.connectTimeoutMs ?? 10_000} millis`),
            Schedule.compose(Schedule.recurs(60))
          )
        )
      ),
      (nc) =>
        boundedRelease(
          () => nc.drain(),
          () => void nc.close()
        )
    )
  )

const busEventOf: Partial<Record<string, BusEvent>> = {
  disconnect: { _tag: "Disconnected" },
  reconnect: { _tag: "Reconnected" },
  close: { _tag: "Closed" }
}

/** A BusMessage of `m`; `subject` when the caller knows it (an exact subscription's), saving its decoding. */
const toBusMessage = (m: Msg, headers: ReceivedHeaders, subject?: string): BusMessage => ({
  subject: subject ?? m.subject,
  data: m.data,
  headers: headers.of(m),
  // Service messages carry "" when the sender expects no reply.
  reply: m.reply === "" ? undefined : m.reply
})

const isWildcard = (subject: string) => subject.includes("*") || subject.includes(">")

/**
 * `iterable` whose iterators' `return()` does not wait. Per the async-generator rules a `return()` queues
 * behind a pending `next()`, and at shutdown that `next()` may wait forever (every peer stopped publishing
 * too): the stream's release, and with it the whole process's shutdown, would hang. The iterator is still
 * told to stop; the subscription's own release then drains or unsubscribes it.
 */
const withPromptReturn = <A>(iterable: AsyncIterable<A>): AsyncIterable<A> => ({
  [Symbol.asyncIterator]() {
    const iterator = iterable[Symbol.asyncIterator]()
    return {
      next: () => iterator.next(),
      return: (value?: unknown) => {
        void iterator.return?.(value)?.catch(constVoid)
        return Promise.resolve({ done: true as const, value: value as A })
      }
    }
  }
})

/** Turns a nats.js async iterator into a Stream that ends when the iterator does (after a drain). */
const iterableStream = (
  iterable: AsyncIterable<Msg>,
  headers: ReceivedHeaders,
  operation: string
): Stream.Stream<BusMessage> =>
  Stream.fromAsyncIterable(withPromptReturn(iterable), (cause) => new BusError({ operation, cause })).pipe(
    Stream.map((m) => toBusMessage(m, headers)),
    Stream.catchAll((error) =>
      Stream.fromEffect(Effect.logWarning("subscription ended with an error", error)).pipe(Stream.drain)
    )
  )

export const makeNatsBus = (nc: NatsConnection) => {
  const inbox = makeReplyInbox(nc)
  const received = new ReceivedHeaders()
  return Bus.of({
    publish: (subject, data, headers) =>
      Effect.try({
        try: () => nc.publish(subject, data, { headers: toNatsHeaders(headers) }),
        catch: (cause) => new BusError({ operation: `publish ${subject}`, cause })
      }),
    // No canceler: an interrupt hook costs an ask as much as the rest of its Effect steps. An interrupted ask's
    // entry stays until its timeout (bounded by the ask rate times the timeout) and its late reply is ignored.
    request: (subject, data, headers, timeoutMs) =>
      Effect.async<BusMessage, AskTimeoutError | UnavailableError | BusError>((resume) => {
        inbox.request(subject, data, toNatsHeaders(headers), timeoutMs, (failure, reply) => {
          if (failure === undefined) return resume(Effect.succeed(toBusMessage(reply!, received)))
          switch (failure._tag) {
            case "Timeout":
              return resume(Effect.fail(new AskTimeoutError({ subject, timeoutMs })))
            case "NoResponders":
              return resume(Effect.fail(new UnavailableError({ subject, reason: "no responders" })))
            case "Closed":
              return resume(Effect.fail(new UnavailableError({ subject, reason: "connection closed" })))
            case "Failed":
              return resume(
                Effect.fail(
                  nc.isClosed() || nc.isDraining()
                    ? new UnavailableError({ subject, reason: "connection closed" })
                    : new BusError({ operation: `request ${subject}`, cause: failure.cause })
                )
              )
          }
        })
      }),
    respond: (to, data, headers) =>
      to.reply === undefined
        ? Effect.void
        : Effect.try({
            try: () => nc.publish(to.reply!, data, { headers: toNatsHeaders(headers) }),
            catch: (cause) => new BusError({ operation: `respond ${to.subject}`, cause })
          }),
    subscribe: (subject, options) =>
      Effect.acquireRelease(
        Effect.try({
          try: () => nc.subscribe(subject, options?.queue ? { queue: options.queue } : {}),
          catch: (cause) => new BusError({ operation: `subscribe ${subject}`, cause })
        }),
        (sub) =>
          boundedRelease(
            () => sub.drain(),
            () => sub.unsubscribe()
          )
      ).pipe(Effect.map((sub) => iterableStream(sub, received, `subscription ${subject}`))),
    listen: (subject, onMessage, onError) =>
      Effect.acquireRelease(
        Effect.try({
          try: () => {
            const listener = guardedListener(subject, onMessage, onError)
            return nc.subscribe(subject, {
              callback: (error, m) =>
                error === null
                  ? listener(toBusMessage(m, received))
                  : onError(new BusError({ operation: `listen ${subject}`, cause: error }))
            })
          },
          catch: (cause) => new BusError({ operation: `listen ${subject}`, cause })
        }),
        (sub) =>
          boundedRelease(
            () => sub.drain(),
            () => sub.unsubscribe()
          )
      ).pipe(Effect.asVoid),
    serve: (spec, onMessage) =>
      Effect.gen(function* () {
        const service = yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: () =>
              new Svcm(nc as any).add({
                name: spec.name,
                version: spec.version,
                description: spec.description,
                metadata: { ...spec.metadata },
                // "" = no default queue group; endpoints that want one say so.
                queue: "",
                ...(spec.stats ? { statsHandler: () => Promise.resolve(spec.stats!()) } : {})
              }),
            catch: (cause) => new BusError({ operation: `serve ${spec.name}`, cause })
          }),
          // stop() drains the endpoint subscriptions: callbacks run for everything already received.
          (svc) => boundedRelease(() => svc.stop().then(() => undefined), constVoid)
        )
        for (const endpoint of spec.endpoints) {
          const subject = isWildcard(endpoint.subject) ? undefined : endpoint.subject
          yield* Effect.try({
            try: () =>
              service.addEndpoint(endpoint.name, {
                subject: endpoint.subject,
                ...(endpoint.queue ? { queue: endpoint.queue } : {}),
                handler: (error, msg) => {
                  if (error === null) onMessage(toBusMessage(msg as unknown as Msg, received, subject))
                }
              }),
            catch: (cause) => new BusError({ operation: `serve ${endpoint.subject}`, cause })
          })
        }
      }),
    flush: Effect.tryPromise({
      try: () => nc.flush(),
      catch: (cause) => new BusError({ operation: "flush", cause })
    }),
    events: Stream.fromAsyncIterable(nc.status(), () => undefined).pipe(
      Stream.filterMap((status) => Option.fromNullable(busEventOf[status.type])),
      Stream.catchAll(() => Stream.empty)
    )
  })
}

/** Bus backed by NATS, given a connection. */
export const natsBusLayer: Layer.Layer<Bus, never, Nats> = Layer.effect(Bus, Effect.map(Nats, makeNatsBus))

/** Connection and bus in one layer; the connection is also exposed for JetStream users. */
export const natsLayer = (options: NatsOptions): Layer.Layer<Bus | Nats, BusError> =>
  natsBusLayer.pipe(Layer.provideMerge(natsConnectionLayer(options)))
