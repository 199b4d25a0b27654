/**
 * The actor runtime over the in-memory bus: deterministic, no server. Supervision timing runs on TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { ActorStatus, CounterAdd, CounterGet, ErrorCode, PingRequest } from "@reef/proto"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { defineActor, onAsk, onTellBatch } from "./actor.js"
import { incarnationAfter, PingRpc, spawn } from "./actor-runtime.js"
import { Bus } from "./bus.js"
import { encodeMessage } from "./codec.js"
import { CounterAddRpc, CounterFailRpc, CounterGetRpc, counterActor } from "./counter-actor.js"
import type { RemoteError } from "./errors.js"
import { TRACEPARENT_HEADER, TYPE_HEADER } from "./headers.js"
import { memoryKernelLayer } from "./kernel-layer.js"
import { Messenger } from "./messenger.js"
import { actorSubject } from "./subjects.js"

const kernel = memoryKernelLayer({ cluster: "t", askTimeoutMs: 1_000 })
const addr = (id: string) => ({ cluster: "t", role: "counter", id })
const remoteCode = (e: unknown) => (e as RemoteError).detail?.code

describe("actor runtime", () => {
  it.scoped("tell, then ask: messages to one actor are handled one at a time, in order", () =>
    Effect.gen(function* () {
      yield* spawn(counterActor, "c1")
      const m = yield* Messenger
      for (let i = 1; i <= 100; i++) yield* m.tell(addr("c1"), CounterAdd, { key: "k", amount: i })
      const value = yield* m.ask(addr("c1"), CounterGetRpc, { key: "k" })
      expect(value.value).toBe(5050)
      expect(value.adds).toBe(100)
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("plain tells waiting together reach a batched handler as one group, in order", () =>
    Effect.gen(function* () {
      const groups: Array<ReadonlyArray<number>> = []
      const grouped = defineActor<number>({
        role: "counter",
        initialState: Effect.succeed(0),
        handlers: [
          onTellBatch(CounterAdd, (adds) => Effect.sync(() => groups.push(adds.map((a) => a.amount)))),
          onAsk(CounterGetRpc, (get) => Effect.succeed({ key: get.key, value: groups.length, adds: 0 }))
        ]
      })
      yield* spawn(grouped, "c1")
      const m = yield* Messenger
      // Sent without a yield in between: all wait in the mailbox when the actor next runs.
      for (let i = 1; i <= 5; i++) yield* m.tell(addr("c1"), CounterAdd, { key: "k", amount: i })
      // A one-way message of another type ends the run (its only handler is the ask's).
      yield* m.tell(addr("c1"), CounterGet, { key: "k" })
      for (let i = 6; i <= 7; i++) yield* m.tell(addr("c1"), CounterAdd, { key: "k", amount: i })
      yield* m.ask(addr("c1"), CounterGetRpc, { key: "k" })
      expect(groups).toEqual([
        [1, 2, 3, 4, 5],
        [6, 7]
      ])
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("tellMany delivers a whole batch in one bus message", () =>
    Effect.gen(function* () {
      yield* spawn(counterActor, "c1")
      const m = yield* Messenger
      const adds = Array.from({ length: 500 }, () => ({ key: "k", amount: 2 }))
      yield* m.tellMany(addr("c1"), CounterAdd, adds)
      expect((yield* m.ask(addr("c1"), CounterGetRpc, { key: "k" })).value).toBe(1000)
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("a type with a tell and an ask handler: one-way messages and batches take the first, asks the second", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const both = defineActor<number>({
        role: "counter",
        initialState: Effect.succeed(0),
        handlers: [
          onTellBatch(CounterAdd, (adds) => Effect.sync(() => calls.push(`tell ${adds.length}`))),
          onAsk(CounterAddRpc, (add) =>
            Effect.sync(() => {
              calls.push("ask")
              return { key: add.key, value: add.amount, adds: 1 }
            })
          )
        ]
      })
      yield* spawn(both, "c1")
      const m = yield* Messenger
      yield* m.tell(addr("c1"), CounterAdd, { key: "k", amount: 1 })
      yield* m.tellMany(addr("c1"), CounterAdd, [
        { key: "k", amount: 1 },
        { key: "k", amount: 2 }
      ])
      expect((yield* m.ask(addr("c1"), CounterAddRpc, { key: "k", amount: 3 })).value).toBe(3)
      expect(calls).toEqual(["tell 1", "tell 2", "ask"])
    }).pipe(Effect.provide(kernel))
  )

  it.live("askAny reaches exactly one instance; broadcast reaches all", () =>
    Effect.gen(function* () {
      yield* spawn(counterActor, "a")
      yield* spawn(counterActor, "b")
      const m = yield* Messenger
      // Order is kept per subject, not across a role's subjects: use asks so every add is applied before reading.
      for (let i = 0; i < 10; i++) yield* m.askAny("counter", CounterAddRpc, { key: "k", amount: 1 })
      yield* m.broadcast("counter", CounterAdd, { key: "b", amount: 1 })
      const a = yield* m.ask(addr("a"), CounterGetRpc, { key: "k" })
      const b = yield* m.ask(addr("b"), CounterGetRpc, { key: "k" })
      expect(a.value + b.value).toBe(10)
      const seen = (id: string) =>
        m.ask(addr(id), CounterGetRpc, { key: "b" }).pipe(
          Effect.map((v) => v.value),
          Effect.filterOrFail((v) => v === 1),
          Effect.retry(Schedule.spaced("1 millis")),
          Effect.timeout("2 seconds")
        )
      expect(yield* seen("a")).toBe(1)
      expect(yield* seen("b")).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(kernel))
  )

  it.scoped("an unknown type, malformed bytes and an oversized payload get typed error replies", () =>
    Effect.gen(function* () {
      const ref = yield* spawn(counterActor, "c1")
      const bus = yield* Bus
      const subject = actorSubject(addr("c1"))
      const unknown = yield* bus.request(subject, new Uint8Array([1]), new Map([[TYPE_HEADER, "x.Nope"]]), 500)
      const malformed = yield* bus.request(
        subject,
        new Uint8Array([0x0a, 99]),
        new Map([[TYPE_HEADER, CounterGet.$type]]),
        500
      )
      const oversized = yield* bus.request(
        subject,
        new Uint8Array(2 * 1024 * 1024),
        new Map([[TYPE_HEADER, CounterGet.$type]]),
        500
      )
      const { decodeReply } = yield* Effect.promise(() => import("./messenger.js"))
      const codes = yield* Effect.forEach([unknown, malformed, oversized], (r) =>
        decodeReply(subject, CounterGet, r).pipe(Effect.flip, Effect.map(remoteCode))
      )
      expect(codes).toEqual([
        ErrorCode.ERROR_CODE_UNKNOWN_TYPE,
        ErrorCode.ERROR_CODE_MALFORMED,
        ErrorCode.ERROR_CODE_OVERSIZED
      ])
      expect((yield* ref.stats).rejected).toBe(3)
      // The actor is unharmed and keeps its state.
      expect(yield* ref.status).toBe(ActorStatus.ACTOR_STATUS_RUNNING)
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("refuses to send an oversized message", () =>
    Effect.gen(function* () {
      yield* spawn(counterActor, "c1")
      const m = yield* Messenger
      const error = yield* m.tell(addr("c1"), CounterAdd, { key: "x".repeat(2_000_000), amount: 1 }).pipe(Effect.flip)
      expect(error._tag).toBe("OversizedMessageError")
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("ask to nobody fails as unavailable; a silent receiver times out (TestClock)", () =>
    Effect.gen(function* () {
      const m = yield* Messenger
      const none = yield* m.ask(addr("ghost"), CounterGetRpc, { key: "k" }).pipe(Effect.flip)
      expect(none._tag).toBe("UnavailableError")
      const bus = yield* Bus
      yield* bus.subscribe(actorSubject(addr("silent"))) // receives, never answers
      const fiber = yield* m
        .ask(addr("silent"), CounterGetRpc, { key: "k" }, { timeoutMs: 200 })
        .pipe(Effect.flip, Effect.fork)
      yield* TestClock.adjust("200 millis")
      expect((yield* Fiber.join(fiber))._tag).toBe("AskTimeoutError")
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("a handler failure is an error reply; the actor keeps running with its state", () =>
    Effect.gen(function* () {
      const ref = yield* spawn(counterActor, "c1")
      const m = yield* Messenger
      yield* m.ask(addr("c1"), CounterAddRpc, { key: "k", amount: 7 })
      const error = yield* m.ask(addr("c1"), CounterFailRpc, { reason: "boom", defect: false }).pipe(Effect.flip)
      expect(remoteCode(error)).toBe(ErrorCode.ERROR_CODE_HANDLER_FAILED)
      expect(error.message).toContain("requested failure: boom")
      expect((yield* m.ask(addr("c1"), CounterGetRpc, { key: "k" })).value).toBe(7)
      expect((yield* ref.stats).errored).toBe(1)
      expect((yield* ref.stats).restarts).toBe(0)
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("a defect restarts the actor with fresh state after the policy's delay (TestClock)", () =>
    Effect.gen(function* () {
      const ref = yield* spawn(counterActor, "c1", { incarnation: "i1" })
      const m = yield* Messenger
      const incarnation = () =>
        m
          .ask(addr("c1"), PingRpc, PingRequest.fromPartial({ payload: "" }))
          .pipe(Effect.map((r) => r.hops[0]?.incarnation))
      expect(yield* incarnation()).toBe("i1")
      yield* m.ask(addr("c1"), CounterAddRpc, { key: "k", amount: 7 })
      const error = yield* m.ask(addr("c1"), CounterFailRpc, { reason: "bug", defect: true }).pipe(Effect.flip)
      expect(remoteCode(error)).toBe(ErrorCode.ERROR_CODE_HANDLER_FAILED)
      expect(yield* ref.status).toBe(ActorStatus.ACTOR_STATUS_RESTARTING)
      const pending = yield* m.ask(addr("c1"), CounterGetRpc, { key: "k" }).pipe(Effect.fork)
      yield* TestClock.adjust("50 millis")
      expect((yield* Fiber.join(pending)).value).toBe(0)
      expect(yield* ref.status).toBe(ActorStatus.ACTOR_STATUS_RUNNING)
      expect((yield* ref.stats).restarts).toBe(1)
      // Its state is gone: to its peers it is a new incarnation, never the same one under its id.
      expect(yield* incarnation()).toBe(incarnationAfter("i1", 1))
      expect(incarnationAfter("i1", 1)).not.toBe("i1")
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("repeated crashes stop the actor: it is marked FAILED and answers STOPPED", () =>
    Effect.gen(function* () {
      const fragile = defineActor({ ...counterActor, restartPolicy: Schedule.recurs(2) })
      const ref = yield* spawn(fragile, "c1")
      const m = yield* Messenger
      for (let i = 0; i < 3; i++) {
        yield* m.ask(addr("c1"), CounterFailRpc, { reason: `bug ${i}`, defect: true }).pipe(Effect.flip)
      }
      expect(yield* ref.status).toBe(ActorStatus.ACTOR_STATUS_FAILED)
      const error = yield* m.ask(addr("c1"), CounterGetRpc, { key: "k" }).pipe(Effect.flip)
      expect(remoteCode(error)).toBe(ErrorCode.ERROR_CODE_STOPPED)
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("ping relays through a chain of actors", () =>
    Effect.gen(function* () {
      yield* spawn(counterActor, "a")
      yield* spawn(counterActor, "b")
      const m = yield* Messenger
      const reply = yield* m.ask(addr("a"), PingRpc, PingRequest.fromPartial({ relay: [addr("b")], payload: "hi" }))
      expect(reply.hops.map((h) => h.address?.id)).toEqual(["a", "b"])
      expect(reply.payload).toBe("hi")
    }).pipe(Effect.provide(kernel))
  )

  it.scoped(
    "with tracing off, a received trace context is passed on by what the handler sends, and none is made up",
    () =>
      Effect.gen(function* () {
        yield* spawn(counterActor, "a")
        yield* spawn(counterActor, "b")
        const bus = yield* Bus
        const atB = yield* bus.subscribe(actorSubject(addr("b")))
        const seen = yield* atB.pipe(Stream.take(2), Stream.runCollect, Effect.fork)
        const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        const relay = encodeMessage(PingRequest, PingRequest.fromPartial({ relay: [addr("b")], payload: "x" }))
        yield* bus.request(
          actorSubject(addr("a")),
          relay,
          new Map([
            [TYPE_HEADER, PingRequest.$type],
            [TRACEPARENT_HEADER, traceparent]
          ]),
          1_000
        )
        yield* bus.request(actorSubject(addr("a")), relay, new Map([[TYPE_HEADER, PingRequest.$type]]), 1_000)
        const [traced, untraced] = Chunk.toReadonlyArray(yield* Fiber.join(seen))
        // Same trace, and the parent is the sender's span (no span of its own was recorded at a).
        expect(traced!.headers.get(TRACEPARENT_HEADER)).toBe(traceparent)
        expect(untraced!.headers.has(TRACEPARENT_HEADER)).toBe(false)
      }).pipe(Effect.provide(kernel))
  )

  it.scoped("handled, errored and rejected messages are counted in the actor's metrics", () =>
    Effect.gen(function* () {
      yield* spawn(counterActor, "metered")
      const m = yield* Messenger
      yield* m.tellMany(addr("metered"), CounterAdd, [
        { key: "k", amount: 1 },
        { key: "k", amount: 2 }
      ])
      yield* m.ask(addr("metered"), CounterGetRpc, { key: "k" })
      yield* m.ask(addr("metered"), CounterFailRpc, { reason: "x", defect: false }).pipe(Effect.flip)
      const bus = yield* Bus
      yield* bus.request(actorSubject(addr("metered")), new Uint8Array([1]), new Map([[TYPE_HEADER, "x.Nope"]]), 500)
      const value = (name: string, extra: Record<string, string> = {}) =>
        Metric.snapshot.pipe(
          Effect.map((pairs) =>
            pairs
              .filter(
                (p) =>
                  p.metricKey.name === name &&
                  Object.entries({ actor: "counter/metered", ...extra }).every(([k, v]) =>
                    p.metricKey.tags.some((t) => t.key === k && t.value === v)
                  )
              )
              .map((p) => (p.metricState as { count?: number }).count)
          )
        )
      expect(yield* value("reef_actor_handled_total")).toEqual([3])
      expect(yield* value("reef_actor_errored_total")).toEqual([1])
      expect(yield* value("reef_actor_rejected_total", { reason: "UnknownTypeError" })).toEqual([1])
      expect(yield* value("reef_actor_handle_latency_ms")).toEqual([3])
    }).pipe(Effect.provide(kernel))
  )

  it.scoped("a full mailbox answers asks with OVERLOADED instead of queueing them", () =>
    Effect.gen(function* () {
      const slow = defineActor({ ...counterActor, mailboxCapacity: 2 })
      yield* spawn(slow, "c1")
      const bus = yield* Bus
      const subject = actorSubject(addr("c1"))
      const body = encodeMessage(CounterGet, { key: "k" })
      const replies = yield* Effect.forEach(
        Array.from({ length: 20 }),
        () => bus.request(subject, body, new Map([[TYPE_HEADER, CounterGet.$type]]), 1000).pipe(Effect.either),
        { concurrency: "unbounded" }
      )
      const overloaded = replies.filter((r) => Either.isRight(r) && r.right.headers.get("reef-error") === "1")
      expect(overloaded.length).toBeGreaterThan(0)
      expect(overloaded.length).toBeLessThan(20)
    }).pipe(Effect.provide(kernel))
  )
})
