/**
 * The reply inbox against a real nats-server: replies find their request by token, and every request hears
 * exactly once why it got no reply.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Msg, NatsConnection } from "@nats-io/nats-core"
import { connect } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { startNatsServer } from "./nats-server.js"
import { makeReplyInbox, type RequestFailure } from "./reply-inbox.js"

const connection = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(() => connect({ servers: url })),
    (nc) => Effect.promise(() => nc.close())
  )

const setup = Effect.gen(function* () {
  const server = yield* startNatsServer({ jetstream: false })
  return { client: yield* connection(server.url), responder: yield* connection(server.url) }
})

const inboxes = new WeakMap<NatsConnection, ReturnType<typeof makeReplyInbox>>()

type Outcome = { readonly failure: RequestFailure | undefined; readonly reply: string | undefined }

/** Sends one request; resolves with its first outcome and records every callback it gets. */
const request = (nc: NatsConnection, subject: string, body: string, timeoutMs: number, calls: Array<Outcome>) => {
  const inbox = inboxes.get(nc) ?? makeReplyInbox(nc)
  inboxes.set(nc, inbox)
  return Effect.async<Outcome>((resume) => {
    inbox.request(subject, new TextEncoder().encode(body), undefined, timeoutMs, (failure, reply?: Msg) => {
      const outcome = { failure, reply: reply === undefined ? undefined : new TextDecoder().decode(reply.data) }
      calls.push(outcome)
      resume(Effect.succeed(outcome))
    })
  })
}

describe("reply inbox", () => {
  it.scopedLive("answers each request with its own reply, whatever order the replies come in", () =>
    Effect.gen(function* () {
      const { client, responder } = yield* setup
      const held: Array<Msg> = []
      responder.subscribe("svc", {
        callback: (_error, msg) => {
          held.push(msg)
          // Answer in reverse order once all three arrived.
          if (held.length === 3) for (const m of held.reverse()) m.respond(new TextEncoder().encode(`re ${m.string()}`))
        }
      })
      yield* Effect.promise(() => responder.flush())
      const calls: Array<Outcome> = []
      const outcomes = yield* Effect.all(
        ["a", "b", "c"].map((body) => request(client, "svc", body, 5_000, calls)),
        { concurrency: "unbounded" }
      )
      expect(outcomes).toEqual([
        { failure: undefined, reply: "re a" },
        { failure: undefined, reply: "re b" },
        { failure: undefined, reply: "re c" }
      ])
      expect(calls.length).toBe(3)
    })
  )

  it.scopedLive("tells a request nobody serves at once, and one nobody answers after its timeout, once", () =>
    Effect.gen(function* () {
      const { client, responder } = yield* setup
      const late: Array<Msg> = []
      responder.subscribe("silent", {
        callback: (_error, msg) => {
          late.push(msg)
        }
      })
      yield* Effect.promise(() => responder.flush())
      const calls: Array<Outcome> = []
      expect((yield* request(client, "nobody", "x", 5_000, calls)).failure).toEqual({ _tag: "NoResponders" })
      expect((yield* request(client, "silent", "x", 100, calls)).failure).toEqual({ _tag: "Timeout" })
      // A reply after the timeout finds no request and changes nothing.
      late[0]?.respond(new TextEncoder().encode("too late"))
      yield* Effect.promise(() => responder.flush().then(() => client.flush()))
      expect(calls.map((c) => c.failure?._tag)).toEqual(["NoResponders", "Timeout"])
    })
  )

  it.scopedLive("a forgotten request gets no callback; a closed connection fails what is pending", () =>
    Effect.gen(function* () {
      const { client, responder } = yield* setup
      responder.subscribe("silent", { callback: () => {} })
      yield* Effect.promise(() => responder.flush())
      const inbox = makeReplyInbox(client)
      const calls: Array<RequestFailure | undefined> = []
      const forget = inbox.request("silent", new Uint8Array(0), undefined, 50, (failure) => calls.push(failure))
      forget()
      const pending = Effect.async<RequestFailure | undefined>((resume) => {
        inbox.request("silent", new Uint8Array(0), undefined, 60_000, (failure) => {
          calls.push(failure)
          resume(Effect.succeed(failure))
        })
      })
      const fiber = yield* Effect.fork(pending)
      yield* Effect.promise(() => client.flush())
      yield* Effect.promise(() => client.close())
      expect(yield* Fiber.join(fiber)).toEqual({ _tag: "Closed" })
      yield* Effect.sleep("100 millis") // past the forgotten request's timeout
      expect(calls).toEqual([{ _tag: "Closed" }])
    })
  )
})
