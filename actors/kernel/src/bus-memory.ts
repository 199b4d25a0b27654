/**
 * An in-process Bus with NATS semantics (wildcards, queue groups, request/reply, no-responders), for
 * deterministic tests of kernel and protocol code without a server. Time comes from Effect's Clock, so
 * ask timeouts follow TestClock.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { Bus, type BusMessage, guardedListener, type Headers } from "./bus.js"
import { AskTimeoutError, UnavailableError } from "./errors.js"
import { subjectMatches } from "./subjects.js"

interface MemorySubscription {
  readonly pattern: string
  readonly queue: string | undefined
  /** `null` marks the end of a drained subscription. */
  readonly inbox: Queue.Queue<BusMessage | null>
}

const EMPTY_HEADERS: Headers = new Map()

export const makeMemoryBus = Effect.gen(function* () {
  const subscriptions = new Set<MemorySubscription>()
  const roundRobin = new Map<string, number>()
  const inboxCounter = yield* Ref.make(0)

  /** Routes like nats-server: every plain subscriber, and one member of each queue group. */
  const route = (message: BusMessage): number => {
    const groups = new Map<string, Array<MemorySubscription>>()
    let delivered = 0
    for (const sub of subscriptions) {
      if (!subjectMatches(sub.pattern, message.subject)) continue
      if (sub.queue === undefined) {
        Queue.unsafeOffer(sub.inbox, message)
        delivered++
      } else {
        const key = `${sub.pattern}|${sub.queue}`
        groups.set(key, [...(groups.get(key) ?? []), sub])
      }
    }
    for (const [key, members] of groups) {
      const next = roundRobin.get(key) ?? 0
      roundRobin.set(key, next + 1)
      Queue.unsafeOffer(members[next % members.length]!.inbox, message)
      delivered++
    }
    return delivered
  }

  const subscribe = (pattern: string, options?: { readonly queue?: string }) =>
    Effect.acquireRelease(
      Effect.gen(function* () {
        const sub: MemorySubscription = {
          pattern,
          queue: options?.queue || undefined,
          inbox: yield* Queue.unbounded<BusMessage | null>()
        }
        subscriptions.add(sub)
        return sub
      }),
      (sub) =>
        Effect.sync(() => {
          subscriptions.delete(sub)
          Queue.unsafeOffer(sub.inbox, null)
        })
    ).pipe(Effect.map((sub) => Stream.fromQueue(sub.inbox).pipe(Stream.takeWhile((m): m is BusMessage => m !== null))))

  /** Calls `handle` for each message on `subject` (a fiber per subscription, as NATS has a read loop). */
  const deliverTo = (subject: string, handle: (message: BusMessage) => void, queue?: string) =>
    subscribe(subject, queue ? { queue } : undefined).pipe(
      Effect.flatMap((stream) => Effect.forkScoped(Stream.runForEach(stream, (m) => Effect.sync(() => handle(m))))),
      Effect.asVoid
    )

  return Bus.of({
    publish: (subject, data, headers) =>
      Effect.sync(() => {
        route({ subject, data, headers: headers ?? EMPTY_HEADERS, reply: undefined })
      }),
    request: (subject, data, headers, timeoutMs) =>
      Effect.scoped(
        Effect.gen(function* () {
          const n = yield* Ref.updateAndGet(inboxCounter, (x) => x + 1)
          const inbox = `_INBOX.memory.${n}`
          const replies = yield* subscribe(inbox)
          if (route({ subject, data, headers, reply: inbox }) === 0) {
            return yield* new UnavailableError({ subject, reason: "no responders" })
          }
          const first = yield* replies.pipe(Stream.runHead)
          if (first._tag === "None") return yield* new UnavailableError({ subject, reason: "closed" })
          return first.value
        })
      ).pipe(
        Effect.timeoutFail({
          duration: `${timeoutMs} millis`,
          onTimeout: () => new AskTimeoutError({ subject, timeoutMs })
        })
      ),
    respond: (to, data, headers) =>
      Effect.sync(() => {
        if (to.reply !== undefined)
          route({ subject: to.reply, data, headers: headers ?? EMPTY_HEADERS, reply: undefined })
      }),
    subscribe,
    listen: (subject, onMessage, onError) => deliverTo(subject, guardedListener(subject, onMessage, onError)),
    serve: (spec, onMessage) =>
      Effect.forEach(spec.endpoints, (e) => deliverTo(e.subject, onMessage, e.queue), { discard: true }),
    flush: Effect.void,
    events: Stream.never
  })
})

/** A fresh in-memory bus; every layer build is its own isolated "server". */
export const memoryBusLayer: Layer.Layer<Bus> = Layer.effect(Bus, makeMemoryBus)
