/**
 * How a role declares an actor: its protobuf protocol (one handler per accepted message type), its private
 * state and its lifecycle hooks. The runtime (actor-runtime.ts) does everything else.
 */
import type { ActorAddress, ErrorCode } from "@reef/proto"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type { Codec } from "./codec.js"

/** A request type and the reply type it is answered with. */
export interface Rpc<A, B> {
  readonly request: Codec<A>
  readonly reply: Codec<B>
}

export const rpc = <A, B>(request: Codec<A>, reply: Codec<B>): Rpc<A, B> => ({ request, reply })

export interface ActorContext<S> {
  readonly self: ActorAddress
  /** Private state. Only serial (non-concurrent) handlers may touch it. */
  readonly state: Ref.Ref<S>
}

/** What a handler may fail with: any tagged error; `code` chooses the wire ErrorCode (default HANDLER_FAILED). */
export interface HandlerFailure {
  readonly _tag: string
  readonly message?: string
  readonly code?: ErrorCode
}

export interface Handler<S, R> {
  readonly request: Codec<any>
  /** Present for asks: the reply is encoded with it. */
  readonly reply: Codec<any> | undefined
  /** Runs outside the mailbox, in parallel with others; only for handlers that touch no state. */
  readonly concurrent: boolean
  /** `handle` takes an array: consecutive messages of this type in one batch are handled in one call. */
  readonly batched: boolean
  readonly handle: (message: any, context: ActorContext<S>) => Effect.Effect<unknown, HandlerFailure, R>
}

export interface HandlerOptions {
  readonly concurrent?: boolean
}

/** A one-way message handler (tell, broadcast, batches). */
export const onTell = <S, A, R = never>(
  request: Codec<A>,
  handle: (message: A, context: ActorContext<S>) => Effect.Effect<void, HandlerFailure, R>,
  options: HandlerOptions = {}
): Handler<S, R> => ({ request, reply: undefined, concurrent: options.concurrent ?? false, batched: false, handle })

/**
 * A one-way handler that receives messages in groups: all consecutive messages of this type in one batch
 * (tellMany), or a single message from a plain tell. For hot paths, where per-message work must be tiny.
 */
export const onTellBatch = <S, A, R = never>(
  request: Codec<A>,
  handle: (messages: ReadonlyArray<A>, context: ActorContext<S>) => Effect.Effect<void, HandlerFailure, R>
): Handler<S, R> => ({
  request,
  reply: undefined,
  concurrent: false,
  batched: true,
  handle: (messages, context) => handle(messages as ReadonlyArray<A>, context)
})

/** A request/reply handler (ask). */
export const onAsk = <S, A, B, R = never>(
  protocol: Rpc<A, B>,
  handle: (message: A, context: ActorContext<S>) => Effect.Effect<B, HandlerFailure, R>,
  options: HandlerOptions = {}
): Handler<S, R> => ({
  request: protocol.request,
  reply: protocol.reply,
  concurrent: options.concurrent ?? false,
  batched: false,
  handle
})

/** A handler died (a defect, i.e. a bug). The supervisor restarts the actor with fresh state. */
export class ActorCrashed extends Data.TaggedError("ActorCrashed")<{ readonly defect: unknown }> {}

export interface ActorDefinition<S, R = never> {
  readonly role: string
  readonly description?: string
  readonly initialState: Effect.Effect<S, never, R>
  readonly handlers: ReadonlyArray<Handler<S, R>>
  readonly onStart?: (context: ActorContext<S>) => Effect.Effect<void, never, R>
  readonly onStop?: (context: ActorContext<S>) => Effect.Effect<void, never, R>
  /** Deliveries (a single message or one batch) waiting to be handled; asks beyond it get OVERLOADED. */
  readonly mailboxCapacity?: number
  /** Restarts after a defect; when it gives up, the actor is marked FAILED and rejects every message. */
  readonly restartPolicy?: Schedule.Schedule<unknown, ActorCrashed>
  /** Bound on concurrent handlers running at once. */
  readonly maxConcurrentHandlers?: number
}

export const DEFAULT_MAILBOX_CAPACITY = 1024
export const DEFAULT_MAX_CONCURRENT_HANDLERS = 64

/** Up to 4 restarts with exponential backoff (50, 100, 200, 400 ms); the count resets after a quiet minute. */
export const defaultRestartPolicy: Schedule.Schedule<unknown, ActorCrashed> = Schedule.exponential("50 millis").pipe(
  Schedule.intersect(Schedule.recurs(4)),
  Schedule.resetAfter("1 minute")
)

/** Identity function that fixes the type parameters of a definition. */
export const defineActor = <S, R = never>(definition: ActorDefinition<S, R>): ActorDefinition<S, R> => definition
