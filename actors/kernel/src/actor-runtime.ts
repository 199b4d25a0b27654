/**
 * Runs one actor: serves its subjects (direct, any-of-role, broadcast) as a NATS micro service, decodes
 * each message with the actor's codecs, queues it in a bounded mailbox and handles it one at a time.
 *
 * Ingestion runs synchronously in the NATS callback: decode, then offer to the mailbox (no fiber per message).
 * Backpressure is explicit: NATS core has no flow control, so a full mailbox answers asks at once with
 * OVERLOADED (a caller learns about overload instead of waiting for a timeout) and counts and logs tells as
 * dead letters; the mailbox load in every heartbeat lets senders slow down before that.
 *
 * Supervision: a handler failure becomes an error reply, an errored span and a log line. A defect (a bug)
 * crashes the actor: the asker gets HANDLER_FAILED, state is rebuilt from `initialState`, and the loop
 * restarts under the definition's Schedule. When the schedule gives up the actor is marked FAILED in
 * presence and answers every further ask with STOPPED (tells are counted and logged, never silently lost).
 *
 * Shutdown (scope close, e.g. SIGTERM): stop serving (drain the subscriptions), handle what is already in
 * the mailbox, run onStop, and publish a leaving heartbeat.
 */
import { randomUUID } from "node:crypto"
import {
  ATTR_MESSAGING_MESSAGE_BODY_SIZE,
  ATTR_REEF_ACTOR_ADDRESS,
  ATTR_REEF_MESSAGE_TYPE,
  MessagingTracing,
  parentSpanFromTraceparent,
  withMessagingSpan
} from "@reef/observability/tracing"
import {
  type ActorAddress,
  ActorStatus,
  EnvelopeBatch,
  ErrorCode,
  ErrorDetail,
  Heartbeat,
  PingReply,
  PingRequest
} from "@reef/proto"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { constVoid } from "effect/Function"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import {
  type ActorContext,
  ActorCrashed,
  type ActorDefinition,
  DEFAULT_MAILBOX_CAPACITY,
  DEFAULT_MAX_CONCURRENT_HANDLERS,
  defaultRestartPolicy,
  type Handler,
  type HandlerFailure,
  onAsk,
  rpc
} from "./actor.js"
import { ActorStats, actorMetrics } from "./actor-stats.js"
import { type BatchGroup, decodeBatch as decodeBatchEntries } from "./batch-codec.js"
import { Bus, type BusMessage, FixedHeaders } from "./bus.js"
import { CodecRegistry, encodeMessage } from "./codec.js"
import { KernelConfig } from "./config.js"
import { type BusError, errorCodeOf, HandlerError, InvalidAddressError } from "./errors.js"
import { ERROR_HEADER, MALFORMED_HEADERS_HEADER, TRACEPARENT_HEADER, TYPE_HEADER } from "./headers.js"
import { Mailbox } from "./mailbox.js"
import { Messenger } from "./messenger.js"
import { PresenceDetails } from "./presence-details.js"
import {
  actorSubject,
  addressProblem,
  anyInstanceSubject,
  broadcastSubject,
  formatAddress,
  presenceSubject,
  roleQueueGroup
} from "./subjects.js"

/** Every actor answers PingRequest: liveness checks and multi-hop trace tests use it. */
export const PingRpc = rpc(PingRequest, PingReply)

/** A decoded message waiting in the mailbox. */
type Delivery =
  | {
      readonly _tag: "Single"
      readonly message: BusMessage
      readonly value: unknown
      readonly handler: Handler<any, any>
    }
  | {
      readonly _tag: "Batch"
      readonly message: BusMessage
      /** One handler call each: a single entry, or consecutive entries for a batched handler. */
      readonly groups: ReadonlyArray<BatchGroup<Handler<any, any>>>
      readonly count: number
    }

const END = Symbol("end-of-mailbox")
type MailboxItem = Delivery | typeof END

export interface ActorRef {
  readonly address: ActorAddress
  readonly status: Effect.Effect<ActorStatus>
  readonly stats: Effect.Effect<ReturnType<ActorStats["snapshot"]>>
}

export interface SpawnOptions {
  /** Changes on every process start; defaults to a random id. */
  readonly incarnation?: string
}

/**
 * The incarnation an actor presents after `restarts` crashes: its state was rebuilt from `initialState`, so
 * to its peers it is a new incarnation (what the old state held is gone), never the same one under its id.
 * An actor whose `initialState` needs the incarnation it will run as counts its own rebuilds with this.
 */
export const incarnationAfter = (base: string, restarts: number): string =>
  restarts === 0 ? base : `${base}+${restarts}`

const failureMessage = (failure: HandlerFailure): string =>
  failure.message !== undefined && failure.message !== "" ? failure.message : failure._tag

/**
 * Starts an actor in the current scope. It runs until the scope closes.
 */
export const spawn = <S, R>(definition: ActorDefinition<S, R>, id: string, options: SpawnOptions = {}) =>
  Effect.gen(function* () {
    const config = yield* KernelConfig
    const bus = yield* Bus
    const messenger = yield* Messenger
    const address: ActorAddress = { cluster: config.cluster, role: definition.role, id }
    const problem = addressProblem(address)
    if (problem !== undefined) return yield* new InvalidAddressError({ reason: problem })

    const actorName = formatAddress(address)
    const incarnation = options.incarnation ?? randomUUID()
    const capacity = definition.mailboxCapacity ?? DEFAULT_MAILBOX_CAPACITY
    const stats = new ActorStats()
    const metrics = actorMetrics(actorName)
    metrics.touch()
    const status = yield* Ref.make(ActorStatus.ACTOR_STATUS_RUNNING)
    const state = yield* Ref.make(yield* definition.initialState)
    const context: ActorContext<S> = { self: address, state }
    const mailbox = new Mailbox<MailboxItem>(capacity)
    const presenceDetails = yield* Effect.serviceOption(PresenceDetails)
    const concurrency = yield* Effect.makeSemaphore(definition.maxConcurrentHandlers ?? DEFAULT_MAX_CONCURRENT_HANDLERS)

    const pingHandler = onAsk<S, PingRequest, PingReply>(
      PingRpc,
      (request) =>
        Effect.gen(function* () {
          const hop = { address, pid: process.pid, incarnation: incarnationAfter(incarnation, stats.restarts) }
          const [next, ...rest] = request.relay
          if (next === undefined) return { hops: [hop], payload: request.payload }
          const downstream = yield* messenger
            .ask(next, PingRpc, { target: next, relay: rest, payload: request.payload })
            .pipe(Effect.mapError((error) => new HandlerError({ code: errorCodeOf(error), message: error.message })))
          return { hops: [hop, ...downstream.hops], payload: downstream.payload }
        }),
      { concurrent: true }
    )
    // A type may have a one-way handler (tell, batches) and a request/reply one (ask): a message with a reply
    // inbox goes to the latter, a one-way message to the former; a type with only one handler takes both.
    const tellHandlers = new Map<string, Handler<S, R>>()
    const askHandlers = new Map<string, Handler<S, R>>()
    for (const handler of [pingHandler as Handler<S, R>, ...definition.handlers]) {
      ;(handler.reply === undefined ? tellHandlers : askHandlers).set(handler.request.$type, handler)
    }
    const registry = new CodecRegistry(
      [...tellHandlers.values(), ...askHandlers.values()].map((h) => h.request),
      config.maxPayloadBytes
    )
    const oneWayHandler = (type: string) => tellHandlers.get(type) ?? askHandlers.get(type)
    const handlerOf = (message: BusMessage, type: string) =>
      message.reply === undefined ? oneWayHandler(type)! : (askHandlers.get(type) ?? tellHandlers.get(type)!)

    const logContext = { actor: actorName }

    // ---- replies -------------------------------------------------------------------------------------------
    const errorHeaders = new FixedHeaders([
      [ERROR_HEADER, "1"],
      [TYPE_HEADER, ErrorDetail.$type]
    ])
    const replyError = (message: BusMessage, code: ErrorCode, text: string, requestType: string) =>
      message.reply === undefined
        ? Effect.void
        : bus
            .respond(
              message,
              encodeMessage(ErrorDetail, { code, message: text, requestType, actor: actorName }),
              errorHeaders
            )
            .pipe(Effect.catchAll((error) => Effect.logWarning("could not send error reply", error.message)))

    const replyHeaders = new Map<Handler<S, R>, FixedHeaders>()
    for (const handler of askHandlers.values()) {
      replyHeaders.set(handler, new FixedHeaders([[TYPE_HEADER, handler.reply!.$type]]))
    }
    const emptyReplyHeaders = new FixedHeaders([[TYPE_HEADER, ""]])
    const logReplyFailure = (error: BusError) => Effect.logWarning("could not send reply", error.message)
    const replyValue = (message: BusMessage, handler: Handler<S, R>, value: unknown) =>
      message.reply === undefined
        ? Effect.void
        : Effect.catchAll(
            bus.respond(
              message,
              handler.reply === undefined ? new Uint8Array(0) : encodeMessage(handler.reply, value),
              replyHeaders.get(handler) ?? emptyReplyHeaders
            ),
            logReplyFailure
          )

    /** A message refused before any handler ran: counted, logged with context, answered when possible. */
    const reject = (message: BusMessage, code: ErrorCode, text: string, reason: string) => {
      stats.rejected++
      return Effect.logWarning(`rejected message: ${text}`).pipe(
        Effect.annotateLogs({
          ...logContext,
          subject: message.subject,
          type: message.headers.get(TYPE_HEADER) ?? "",
          bytes: message.data.length,
          reason
        }),
        Effect.zipRight(Effect.sync(() => metrics.rejected(reason))),
        Effect.zipRight(replyError(message, code, text, message.headers.get(TYPE_HEADER) ?? ""))
      )
    }

    // ---- handling ------------------------------------------------------------------------------------------
    /**
     * Runs one handler; a failure is reported (and re-raised when `reraise`, for a span around it to see), a defect
     * is reported and then re-raised to crash the actor.
     */
    const runHandler = (message: BusMessage, handler: Handler<S, R>, value: unknown, reraise: boolean) =>
      Effect.suspend(() => {
        const startedMs = performance.now()
        const handled = () => {
          const elapsedMs = performance.now() - startedMs
          stats.recordLatency(elapsedMs)
          metrics.handleLatencyMs(elapsedMs)
        }
        return Effect.matchCauseEffect(handler.handle(value, context), {
          onSuccess: (reply) => {
            handled()
            stats.handled++
            metrics.handled(1)
            return replyValue(message, handler, reply)
          },
          onFailure: (cause) => {
            handled()
            return handlerFailed(message, handler, cause, reraise)
          }
        })
      })

    const handlerFailed = (
      message: BusMessage,
      handler: Handler<S, R>,
      cause: Cause.Cause<HandlerFailure>,
      reraise: boolean
    ) =>
      Effect.gen(function* () {
        stats.errored++
        metrics.errored(1)
        const failure = Cause.failureOption(cause)
        if (failure._tag === "Some") {
          yield* Effect.logWarning(`handler failed: ${failureMessage(failure.value)}`).pipe(
            Effect.annotateLogs({ ...logContext, subject: message.subject, type: handler.request.$type })
          )
          yield* replyError(message, errorCodeOf(failure.value), failureMessage(failure.value), handler.request.$type)
          if (reraise) return yield* Effect.fail(failure.value)
          return
        }
        yield* replyError(
          message,
          ErrorCode.ERROR_CODE_HANDLER_FAILED,
          `actor crashed handling ${handler.request.$type}`,
          handler.request.$type
        )
        return yield* Effect.failCause(cause as Cause.Cause<never>)
      })

    /** The lean path for one group of a batch: failures are counted and logged; defects crash the actor. */
    const runBatchGroup = (message: BusMessage, { target, value, count }: BatchGroup<Handler<S, R>>) =>
      target.handle(value, context).pipe(
        Effect.matchEffect({
          onSuccess: () => {
            stats.handled += count
            metrics.handled(count)
            return Effect.void
          },
          onFailure: (failure) => {
            stats.errored += count
            metrics.errored(count)
            return Effect.logWarning(`handler failed: ${failureMessage(failure)}`).pipe(
              Effect.annotateLogs({ ...logContext, subject: message.subject, type: target.request.$type })
            )
          }
        })
      )

    // Spans are recorded or not for the whole life of the actor (the flag comes with the process's layers).
    const tracing = yield* MessagingTracing

    /**
     * `handle` inside a `process` span when tracing is on; otherwise bare, or under the sender's span context when
     * the message carries one, so what the handler sends continues the sender's trace.
     */
    const inProcessSpan = <E>(
      message: BusMessage,
      attributes: Record<string, unknown>,
      handle: Effect.Effect<void, E, R>
    ): Effect.Effect<void, E, R> => {
      const traceparent = message.headers.get(TRACEPARENT_HEADER)
      const parent =
        traceparent === undefined ? undefined : Option.getOrUndefined(parentSpanFromTraceparent(traceparent))
      if (!tracing) return parent === undefined ? handle : Effect.withParentSpan(handle, parent)
      return withMessagingSpan("process", message.subject, {
        parent,
        attributes: {
          ...attributes,
          [ATTR_REEF_ACTOR_ADDRESS]: actorName,
          [ATTR_MESSAGING_MESSAGE_BODY_SIZE]: message.data.length
        }
      })(handle)
    }

    const ignoreFailure = () => Effect.void

    /** Handles one delivery. Failures are already reported; only defects escape. */
    const handleDelivery = (delivery: Delivery): Effect.Effect<void, never, R> => {
      if (delivery._tag === "Single") {
        const { message, handler, value } = delivery
        // With no span to record a failure in, the handler's own steps are all there is to run.
        if (!tracing && !message.headers.has(TRACEPARENT_HEADER)) {
          // Not re-raised: the failure is reported and ends there.
          return runHandler(message, handler, value, false) as Effect.Effect<void, never, R>
        }
        return Effect.catchAll(
          inProcessSpan(
            message,
            { [ATTR_REEF_MESSAGE_TYPE]: handler.request.$type },
            runHandler(message, handler, value, true)
          ),
          ignoreFailure
        )
      }
      // Batch entries are one-way: no reply, one span and one latency sample for the whole batch.
      return inProcessSpan(
        delivery.message,
        { [ATTR_REEF_MESSAGE_TYPE]: EnvelopeBatch.$type, "messaging.batch.message_count": delivery.count },
        Effect.suspend(() => {
          const startedMs = performance.now()
          return Effect.forEach(delivery.groups, (group) => runBatchGroup(delivery.message, group), {
            discard: true
          }).pipe(
            Effect.ensuring(
              Effect.sync(() => {
                const elapsedMs = performance.now() - startedMs
                stats.recordLatency(elapsedMs)
                metrics.handleLatencyMs(elapsedMs)
              })
            )
          )
        })
      )
    }

    // ---- ingestion (synchronous, in the NATS callback) ------------------------------------------------------
    const runtime = yield* Effect.runtime<R>()
    const runFork = Runtime.runFork(runtime)

    /** Decodes a batch; entries that do not decode are rejected one by one, the rest are delivered. */
    const decodeBatch = (message: BusMessage): Delivery | undefined => {
      const batch = decodeBatchEntries(message.data, message.subject, oneWayHandler, config.maxPayloadBytes)
      if (Either.isLeft(batch)) {
        runFork(reject(message, errorCodeOf(batch.left), batch.left.message, batch.left._tag))
        return undefined
      }
      for (const error of batch.right.rejected) {
        runFork(reject({ ...message, reply: undefined }, ErrorCode.ERROR_CODE_MALFORMED, error.message, "batch-entry"))
      }
      return { _tag: "Batch", message, groups: batch.right.groups, count: batch.right.count }
    }

    /** A full mailbox: asks learn it at once (OVERLOADED); tells are counted and logged as dead letters. */
    const overflow = (message: BusMessage) =>
      reject(message, ErrorCode.ERROR_CODE_OVERLOADED, `mailbox of ${actorName} is full (${capacity})`, "overloaded")

    const onMessage = (message: BusMessage): void => {
      const malformedHeaders = message.headers.get(MALFORMED_HEADERS_HEADER)
      if (malformedHeaders !== undefined) {
        const text = `malformed header block on ${message.subject}: ${malformedHeaders}`
        runFork(reject(message, ErrorCode.ERROR_CODE_MALFORMED, text, "MalformedMessageError"))
        return
      }
      const type = message.headers.get(TYPE_HEADER) ?? ""
      let delivery: Delivery | undefined
      if (type === EnvelopeBatch.$type) {
        delivery = decodeBatch(message)
        if (delivery === undefined) return
      } else {
        const decoded = registry.decode(type, message.data, message.subject)
        if (Either.isLeft(decoded)) {
          runFork(reject(message, errorCodeOf(decoded.left), decoded.left.message, decoded.left._tag))
          return
        }
        const handler = handlerOf(message, type)
        if (handler.concurrent) {
          runFork(
            concurrency.withPermits(1)(
              inProcessSpan(
                message,
                { [ATTR_REEF_MESSAGE_TYPE]: type },
                runHandler(message, handler, decoded.right, true)
              ).pipe(
                Effect.catchAll(() => Effect.void),
                Effect.catchAllDefect((defect) => Effect.logError("concurrent handler died", defect))
              )
            )
          )
          return
        }
        delivery = { _tag: "Single", message, value: handler.batched ? [decoded.right] : decoded.right, handler }
      }
      if (!mailbox.offer(delivery)) runFork(overflow(message))
    }

    // ---- processing and supervision ------------------------------------------------------------------------
    /** Items taken from the mailbox but not yet handled: survives a crash so nothing taken is lost. */
    const pending: Array<MailboxItem> = []
    // Up to 256 of what waits, or the next item when nothing does.
    const takeItems = mailbox.take(256)
    const nextItem = Effect.suspend(() =>
      pending.length > 0
        ? Effect.succeed(pending.shift()!)
        : Effect.map(takeItems, (items) => {
            for (const item of items) pending.push(item)
            return pending.shift()!
          })
    )

    // A loop of plain steps, not a generator: it runs once per delivery.
    let ended = false
    const handleItem = (item: MailboxItem): Effect.Effect<void, never, R> => {
      if (item === END) {
        ended = true
        return Effect.void
      }
      return handleDelivery(isMergeableTell(item) ? mergeWaitingTells(item) : item)
    }

    /** A plain tell to a batched handler that no span needs to see on its own. */
    const isMergeableTell = (item: MailboxItem): item is Delivery & { readonly _tag: "Single" } =>
      item !== END &&
      item._tag === "Single" &&
      item.handler.batched &&
      item.message.reply === undefined &&
      !tracing &&
      !item.message.headers.has(TRACEPARENT_HEADER)

    /**
     * `first` and the tells to the same batched handler waiting right behind it, as one group: one handler call
     * for a run of plain tells, as for the entries of one batch (the handler takes messages in groups).
     */
    const mergeWaitingTells = (first: Delivery & { readonly _tag: "Single" }): Delivery => {
      let run = 0
      while (run < pending.length) {
        const next = pending[run]!
        if (!isMergeableTell(next) || next.handler !== first.handler) break
        run++
      }
      if (run === 0) return first
      const values = [...(first.value as ReadonlyArray<unknown>)]
      for (const next of pending.splice(0, run))
        values.push(...((next as typeof first).value as ReadonlyArray<unknown>))
      return {
        _tag: "Batch",
        message: first.message,
        groups: [{ target: first.handler, value: values, count: values.length }],
        count: values.length
      }
    }
    const takeAndHandle = Effect.flatMap(takeItems, (items) => {
      for (const item of items) pending.push(item)
      return handleItem(pending.shift()!)
    })
    const processLoop: Effect.Effect<void, never, R> = Effect.zipRight(
      Ref.set(status, ActorStatus.ACTOR_STATUS_RUNNING),
      Effect.suspend(() => {
        ended = false
        return Effect.whileLoop({
          while: () => !ended,
          body: () => (pending.length > 0 ? handleItem(pending.shift()!) : takeAndHandle),
          step: constVoid
        })
      })
    )

    /** After the supervisor gives up: answer every ask with STOPPED, count and log every tell. */
    const rejectLoop = Effect.gen(function* () {
      while (true) {
        const item = yield* nextItem
        if (item === END) return
        yield* reject(
          item.message,
          ErrorCode.ERROR_CODE_STOPPED,
          `${actorName} has stopped after repeated crashes`,
          "stopped"
        )
      }
    })

    const supervised = processLoop.pipe(
      Effect.catchAllDefect((defect) => Effect.fail(new ActorCrashed({ defect }))),
      Effect.tapError((crash) =>
        Effect.gen(function* () {
          stats.restarts++
          yield* Ref.set(status, ActorStatus.ACTOR_STATUS_RESTARTING)
          yield* Effect.logError("actor crashed; restarting with fresh state", Cause.die(crash.defect)).pipe(
            Effect.annotateLogs({ ...logContext, restarts: stats.restarts })
          )
          yield* Ref.set(state, yield* definition.initialState)
        })
      ),
      Effect.retry(definition.restartPolicy ?? defaultRestartPolicy),
      Effect.catchAll(() =>
        Ref.set(status, ActorStatus.ACTOR_STATUS_FAILED).pipe(
          Effect.zipRight(
            Effect.logError("actor stopped after repeated crashes").pipe(Effect.annotateLogs(logContext))
          ),
          Effect.zipRight(rejectLoop)
        )
      )
    )

    // ---- presence ------------------------------------------------------------------------------------------
    const heartbeatHeaders = new FixedHeaders([[TYPE_HEADER, Heartbeat.$type]])
    const heartbeat = (leaving: boolean) =>
      Effect.gen(function* () {
        const depth = mailbox.size
        metrics.mailboxDepth(depth)
        const details =
          presenceDetails._tag === "Some"
            ? yield* presenceDetails.value.detailsOf(address)
            : { endpoints: {}, roleStatus: {} }
        const beat: Heartbeat = {
          address,
          load: depth / capacity,
          version: config.version,
          status: yield* Ref.get(status),
          incarnation: incarnationAfter(incarnation, stats.restarts),
          handled: stats.handled,
          errored: stats.errored,
          mailboxDepth: depth,
          restarts: stats.restarts,
          leaving,
          pid: process.pid,
          ...details
        }
        yield* bus
          .publish(presenceSubject(address), encodeMessage(Heartbeat, beat), heartbeatHeaders)
          .pipe(Effect.catchAll((error) => Effect.logDebug("heartbeat not sent", error.message)))
      })

    // ---- wiring --------------------------------------------------------------------------------------------
    const actorScope = yield* Effect.scope
    const ingressScope = yield* Scope.fork(actorScope, ExecutionStrategy.sequential)
    yield* bus
      .serve(
        {
          name: `reef-${definition.role}`,
          version: config.version,
          description: definition.description ?? `Reef ${definition.role} actor`,
          metadata: { cluster: address.cluster, role: address.role, id, incarnation },
          endpoints: [
            { name: "direct", subject: actorSubject(address) },
            {
              name: "any",
              subject: anyInstanceSubject(address.cluster, address.role),
              queue: roleQueueGroup(address.role)
            },
            { name: "broadcast", subject: broadcastSubject(address.cluster, address.role) }
          ],
          stats: () => stats.snapshot(mailbox.size)
        },
        onMessage
      )
      .pipe(Scope.extend(ingressScope))

    if (definition.onStart) yield* definition.onStart(context)
    const processing = yield* Effect.forkIn(supervised, actorScope)
    yield* heartbeat(false).pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(config.heartbeatIntervalMs))),
      Effect.forkIn(actorScope)
    )

    const drainTimeout = Duration.millis(config.drainTimeoutMs)
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* Ref.set(status, ActorStatus.ACTOR_STATUS_STOPPING)
        // Drains the subscriptions: every message already sent to this actor is in the mailbox afterwards.
        yield* Scope.close(ingressScope, Exit.void).pipe(
          Effect.interruptible,
          Effect.timeout(drainTimeout),
          Effect.ignore
        )
        // Finalizers are uninterruptible; waits must be interruptible for their timeouts to work.
        mailbox.offerPastCapacity(END)
        yield* Fiber.join(processing).pipe(Effect.interruptible, Effect.timeout(drainTimeout), Effect.ignore)
        yield* Fiber.interrupt(processing)
        if (definition.onStop) yield* definition.onStop(context)
        yield* heartbeat(true)
        yield* Effect.logDebug("actor stopped").pipe(Effect.annotateLogs(logContext))
      })
    )

    const ref: ActorRef = {
      address,
      status: Ref.get(status),
      stats: Effect.sync(() => stats.snapshot(mailbox.size))
    }
    return ref
  })
