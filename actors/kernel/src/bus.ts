/**
 * The Bus service: the only way actors touch the network. A real NATS layer (bus-nats.ts) and an in-memory
 * layer (bus-memory.ts) implement it, so protocol and kernel logic can be tested without a server.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import { type AskTimeoutError, BusError, type UnavailableError } from "./errors.js"

/** Header names are case-sensitive on NATS; the kernel always uses these exact spellings. */
export type Headers = ReadonlyMap<string, string>

/**
 * Headers that never change once made (a message type's, say), so a bus may encode them once and reuse the
 * bytes for every message that carries them. Changing one after it is made throws.
 */
export class FixedHeaders extends Map<string, string> {
  private readonly sealed: boolean

  constructor(entries: Iterable<readonly [string, string]>) {
    super()
    for (const [name, value] of entries) super.set(name, value)
    this.sealed = true
  }

  override set(name: string, value: string): this {
    if (this.sealed) throw new TypeError("FixedHeaders cannot change")
    return super.set(name, value)
  }

  override delete(_name: string): boolean {
    throw new TypeError("FixedHeaders cannot change")
  }

  override clear(): void {
    throw new TypeError("FixedHeaders cannot change")
  }
}

export interface BusMessage {
  readonly subject: string
  readonly data: Uint8Array
  readonly headers: Headers
  /** Inbox to answer on when the sender asked. */
  readonly reply: string | undefined
}

/** One subject an actor serves; `queue` puts it in a NATS queue group (exactly one member receives). */
export interface Endpoint {
  readonly name: string
  readonly subject: string
  readonly queue?: string
}

/** A discoverable service (NATS micro `$SRV.PING|INFO|STATS`) whose endpoints feed one stream. */
export interface ServiceSpec {
  readonly name: string
  readonly version: string
  readonly description: string
  readonly metadata: Readonly<Record<string, string>>
  readonly endpoints: ReadonlyArray<Endpoint>
  /** Extra data reported per endpoint by `$SRV.STATS`. */
  readonly stats?: () => unknown
}

export type BusEvent =
  | { readonly _tag: "Disconnected" }
  | { readonly _tag: "Reconnected" }
  | { readonly _tag: "Closed" }

export interface BusShape {
  readonly publish: (subject: string, data: Uint8Array, headers?: Headers) => Effect.Effect<void, BusError>
  /** Request/reply over the connection's shared inbox (nats.js MuxSubscription). */
  readonly request: (
    subject: string,
    data: Uint8Array,
    headers: Headers,
    timeoutMs: number
  ) => Effect.Effect<BusMessage, AskTimeoutError | UnavailableError | BusError>
  readonly respond: (to: BusMessage, data: Uint8Array, headers?: Headers) => Effect.Effect<void, BusError>
  /**
   * Messages on `subject` until the scope closes. Closing the scope drains: messages already received are
   * still emitted, then the stream ends.
   */
  readonly subscribe: (
    subject: string,
    options?: { readonly queue?: string }
  ) => Effect.Effect<Stream.Stream<BusMessage>, BusError, Scope.Scope>
  /**
   * Calls `onMessage` synchronously for each message on `subject` until the scope closes (no stream or fiber
   * hop per message); closing the scope drains like `subscribe`. For state that a plain function updates,
   * e.g. the membership view: a stream pull per heartbeat cost more than the view's step. `onError` hears of a
   * subscription the server ended (a permission error, say) and of a throw from `onMessage` (a bug), which
   * must not reach the client library's read loop; the subscription goes on after the latter.
   */
  readonly listen: (
    subject: string,
    onMessage: (message: BusMessage) => void,
    onError: (error: BusError) => void
  ) => Effect.Effect<void, BusError, Scope.Scope>
  /**
   * Serves every endpoint of `spec`, visible to NATS service discovery, calling `onMessage` synchronously for
   * each message (the hot path: no stream or fiber hop per message). Closing the scope drains: every message
   * the server already sent is still delivered before the close completes.
   */
  readonly serve: (
    spec: ServiceSpec,
    onMessage: (message: BusMessage) => void
  ) => Effect.Effect<void, BusError, Scope.Scope>
  /** Waits until everything published so far reached the server. */
  readonly flush: Effect.Effect<void, BusError>
  readonly events: Stream.Stream<BusEvent>
}

export class Bus extends Context.Tag("@reef/kernel/Bus")<Bus, BusShape>() {}

/**
 * `onMessage` for `listen`, with a throw (a bug in the listener) reported to `onError` instead of reaching the
 * bus's read loop, which goes on with the next message.
 */
export const guardedListener =
  (subject: string, onMessage: (message: BusMessage) => void, onError: (error: BusError) => void) =>
  (message: BusMessage): void => {
    try {
      onMessage(message)
    } catch (cause) {
      onError(new BusError({ operation: `handle a message on ${subject}`, cause }))
    }
  }
