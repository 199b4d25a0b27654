/**
 * The kernel over a real nats-server spawned for this file, with counter actors in their own OS processes.
 */
import { connect as netConnect } from "node:net"
import { Svcm } from "@nats-io/services"
import { connect } from "@nats-io/transport-node"
import {
  CounterAddRpc,
  CounterFailRpc,
  CounterGetRpc,
  decodeReply,
  isJoined,
  Membership,
  Messenger,
  type NatsServer,
  PingRpc,
  RemoteError,
  TYPE_HEADER
} from "@reef/kernel"
import { ActorStatus, CounterAdd, CounterGet, ErrorCode, MemberState } from "@reef/proto"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { eventually, kernelClient, makeHarness, startActorProcess, startNats } from "./harness.js"

const cluster = "knats"
const harness = makeHarness()
let nats: NatsServer
let client: ReturnType<typeof kernelClient>

const address = (id: string) => ({ cluster, role: "counter", id })

beforeAll(async () => {
  nats = await startNats(harness)
  await Promise.all(
    ["p1", "p2"].map((id) => startActorProcess(harness, { role: "counter", id, natsUrl: nats.url, cluster }))
  )
  client = kernelClient(nats.url, cluster, { askTimeoutMs: 3_000 })
  await client.runPromise(
    Effect.flatMap(Membership, (m) =>
      m.awaitMembers((ms) => ["p1", "p2"].every((id) => ms.some((x) => x.address?.id === id && isJoined(x))))
    )
  )
}, 60_000)

afterAll(async () => {
  await client?.dispose()
  await harness.close()
})

/** What counter `id` reports in `$SRV.STATS` (NATS micro discovery: what `nats micro stats` shows). */
const microStats = async (id: string): Promise<{ readonly handled: number; readonly rejected: number }> => {
  const nc = await connect({ servers: nats.url })
  try {
    // @nats-io/services 3.0.0-25 types its connection with an older nats-core than 3.4's (the kernel does the same).
    const micro = new Svcm(nc as unknown as ConstructorParameters<typeof Svcm>[0])
    for await (const stats of await micro.client().stats("reef-counter")) {
      const data = stats.endpoints?.[0]?.data as { handled: number; rejected: number } | undefined
      if (stats.metadata?.cluster === cluster && stats.metadata?.id === id && data !== undefined) return data
    }
    throw new Error(`counter ${id} did not answer $SRV.STATS`)
  } finally {
    await nc.close()
  }
}

describe("kernel across processes over NATS", () => {
  it("asks, tells and batches reach an actor in another process, in order", async () => {
    const value = await client.runPromise(
      Effect.gen(function* () {
        const m = yield* Messenger
        for (let i = 0; i < 50; i++) yield* m.tell(address("p1"), CounterAdd, { key: "order", amount: 1 })
        yield* m.tellMany(
          address("p1"),
          CounterAdd,
          Array.from({ length: 1000 }, () => ({ key: "order", amount: 1 }))
        )
        return yield* m.ask(address("p1"), CounterGetRpc, { key: "order" })
      })
    )
    expect(value.value).toBe(1050)
  })

  it("askAny spreads over the queue group; broadcast reaches every process", async () => {
    const result = await client.runPromise(
      Effect.gen(function* () {
        const m = yield* Messenger
        yield* Effect.forEach(
          Array.from({ length: 40 }),
          () => m.askAny("counter", CounterAddRpc, { key: "any", amount: 1 }),
          {
            concurrency: 8
          }
        )
        yield* m.broadcast("counter", CounterAdd, { key: "all", amount: 1 })
        const seen = (id: string) =>
          eventually(m.ask(address(id), CounterGetRpc, { key: "all" }).pipe(Effect.filterOrFail((v) => v.value === 1)))
        yield* seen("p1")
        yield* seen("p2")
        const a = yield* m.ask(address("p1"), CounterGetRpc, { key: "any" })
        const b = yield* m.ask(address("p2"), CounterGetRpc, { key: "any" })
        return [a.value, b.value]
      })
    )
    expect(result[0]! + result[1]!).toBe(40)
    expect(result[0]).toBeGreaterThan(0)
    expect(result[1]).toBeGreaterThan(0)
  })

  it("a ping relayed p1 -> p2 crosses both processes", async () => {
    const reply = await client.runPromise(
      Effect.flatMap(Messenger, (m) => m.ask(address("p1"), PingRpc, { relay: [address("p2")], payload: "x" }))
    )
    expect(reply.hops.map((h) => h.address?.id)).toEqual(["p1", "p2"])
    expect(new Set(reply.hops.map((h) => h.pid)).size).toBe(2)
  })

  it("malformed, unknown and oversized payloads get typed error replies and the actor keeps serving", async () => {
    const nc = await connect({ servers: nats.url })
    const subject = `reef.${cluster}.counter.p1`
    const ask = async (type: string, data: Uint8Array) => {
      const { headers } = await import("@nats-io/nats-core")
      const h = headers()
      h.set(TYPE_HEADER, type)
      const msg = await nc.request(subject, data, { timeout: 3000, headers: h })
      const reply = {
        subject,
        data: msg.data,
        headers: new Map(msg.headers ? [...msg.headers.keys()].map((k) => [k, msg.headers!.get(k)]) : []),
        reply: undefined
      }
      return Effect.runSync(Effect.either(decodeReply(subject, CounterGet, reply)))
    }
    const codes = []
    for (const [type, data] of [
      ["reef.v1.NoSuchThing", new Uint8Array([1, 2, 3])],
      [CounterGet.$type, new Uint8Array([0x0a, 0x7f, 0x01])],
      [CounterGet.$type, new Uint8Array(1_040_000)]
    ] as const) {
      const result = await ask(type, data)
      codes.push(Either.isLeft(result) && result.left instanceof RemoteError ? result.left.detail.code : -1)
    }
    expect(codes).toEqual([
      ErrorCode.ERROR_CODE_UNKNOWN_TYPE,
      ErrorCode.ERROR_CODE_MALFORMED,
      ErrorCode.ERROR_CODE_OVERSIZED
    ])
    // A malformed one-way message (no reply inbox) is rejected (counted, logged), never a crash.
    const before = await microStats("p1")
    nc.publish(subject, new Uint8Array([0xff, 0xff]))
    await nc.flush()
    await nc.close()
    const alive = await client.runPromise(
      Effect.flatMap(Messenger, (m) => m.ask(address("p1"), CounterGetRpc, { key: "order" }))
    )
    expect(alive.value).toBe(1050)
    const after = await microStats("p1")
    expect(after.rejected).toBe(before.rejected + 1)
    expect(after.handled).toBeGreaterThan(before.handled)
  })

  it("a header block nats.js cannot parse, sent by a raw client, is rejected and the actor keeps serving", async () => {
    const before = await microStats("p1")
    // nats.js never sends a header name with a space, so this speaks the protocol over a plain socket.
    const header = "NATS/1.0\r\nreef type: reef.v1.CounterGet\r\n\r\n"
    const payload = "\x0a\x01k"
    const { port } = new URL(nats.url.replace("nats://", "http://"))
    const socket = netConnect(Number(port), "127.0.0.1")
    let received = ""
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1")
    })
    await vi.waitFor(() => expect(received).toContain("INFO"), { timeout: 10_000 })
    socket.write(`CONNECT {"verbose":false,"pedantic":false,"headers":true,"protocol":1}\r\n`)
    socket.write(`HPUB reef.${cluster}.counter.p1 ${header.length} ${header.length + payload.length}\r\n`)
    socket.write(`${header}${payload}\r\nPING\r\n`, "latin1")
    await vi.waitFor(() => expect(received).toContain("PONG"), { timeout: 10_000 })
    socket.destroy()
    await vi.waitFor(async () => expect((await microStats("p1")).rejected).toBe(before.rejected + 1), {
      timeout: 10_000
    })
    const alive = await client.runPromise(
      Effect.flatMap(Messenger, (m) => m.ask(address("p1"), CounterGetRpc, { key: "order" }))
    )
    expect(alive.value).toBe(1050)
  })

  it("an ask to a subscriber that never answers fails with AskTimeoutError", async () => {
    const nc = await connect({ servers: nats.url })
    nc.subscribe(`reef.${cluster}.counter.mute`)
    await nc.flush()
    const error = await client.runPromise(
      Effect.flatMap(Messenger, (m) => m.ask(address("mute"), CounterGetRpc, { key: "k" }, { timeoutMs: 300 })).pipe(
        Effect.flip
      )
    )
    await nc.close()
    expect(error._tag).toBe("AskTimeoutError")
  })

  it("a handler failure is an error reply; a defect restarts the remote actor with fresh state", async () => {
    const result = await client.runPromise(
      Effect.gen(function* () {
        const m = yield* Messenger
        yield* m.ask(address("p2"), CounterAddRpc, { key: "sup", amount: 5 })
        const failure = yield* m.ask(address("p2"), CounterFailRpc, { reason: "nope", defect: false }).pipe(Effect.flip)
        const afterFailure = yield* m.ask(address("p2"), CounterGetRpc, { key: "sup" })
        const defect = yield* m.ask(address("p2"), CounterFailRpc, { reason: "bug", defect: true }).pipe(Effect.flip)
        const afterDefect = yield* eventually(m.ask(address("p2"), CounterGetRpc, { key: "sup" }))
        return { failure, afterFailure, defect, afterDefect }
      })
    )
    expect((result.failure as RemoteError).detail.code).toBe(ErrorCode.ERROR_CODE_HANDLER_FAILED)
    expect(result.afterFailure.value).toBe(5)
    expect((result.defect as RemoteError).detail.code).toBe(ErrorCode.ERROR_CODE_HANDLER_FAILED)
    expect(result.afterDefect.value).toBe(0)
    const restarts = await client.runPromise(
      eventually(
        Effect.flatMap(Membership, (m) => m.members).pipe(
          Effect.map((ms) => ms.find((x) => x.address?.id === "p2")?.lastHeartbeat),
          Effect.filterOrFail((h) => (h?.restarts ?? 0) >= 1 && h?.status === ActorStatus.ACTOR_STATUS_RUNNING)
        )
      )
    )
    expect(restarts?.restarts).toBe(1)
  })
})

describe("failures of processes and of the server", () => {
  it("a killed actor process is suspected within the detection bound", async () => {
    const victim = await startActorProcess(harness, { role: "counter", id: "victim", natsUrl: nats.url, cluster })
    await client.runPromise(
      Effect.flatMap(Membership, (m) =>
        m.awaitMembers((ms) => ms.some((x) => x.address?.id === "victim" && isJoined(x)))
      )
    )
    victim.child.kill("SIGKILL")
    const killedAt = Date.now()
    const member = await client.runPromise(
      Effect.flatMap(Membership, (m) =>
        m.awaitMembers((ms) =>
          ms.some((x) => x.address?.id === "victim" && x.state === MemberState.MEMBER_STATE_SUSPECTED)
        )
      )
    )
    expect(member.length).toBeGreaterThan(0)
    // Default bound: suspectAfterMs (1500) + tick (250) after the last heartbeat (<= 500 ms before the kill).
    // Checked loosely: detection must happen, and not wait for the 5 s "left" timeout.
    expect(Date.now() - killedAt).toBeLessThan(5_000)
  })

  it("SIGTERM drains: the actor announces it is leaving and exits cleanly", async () => {
    const leaver = await startActorProcess(harness, { role: "counter", id: "leaver", natsUrl: nats.url, cluster })
    await client.runPromise(
      Effect.flatMap(Membership, (m) =>
        m.awaitMembers((ms) => ms.some((x) => x.address?.id === "leaver" && isJoined(x)))
      )
    )
    await client.runPromise(
      Effect.flatMap(Messenger, (m) =>
        m.tellMany(
          address("leaver"),
          CounterAdd,
          Array.from({ length: 2000 }, () => ({ key: "k", amount: 1 }))
        )
      )
    )
    leaver.child.kill("SIGTERM")
    const code = await leaver.exited
    const left = await client.runPromise(
      Effect.flatMap(Membership, (m) =>
        m.awaitMembers((ms) => ms.some((x) => x.address?.id === "leaver" && x.state === MemberState.MEMBER_STATE_LEFT))
      )
    )
    expect(left.find((x) => x.address?.id === "leaver")?.lastHeartbeat?.leaving).toBe(true)
    expect(code === 0 || code === 130 || code === "SIGTERM").toBe(true)
  })

  it("nats-server killed and restarted mid-run: no acknowledged ask is lost and nothing hangs", async () => {
    const outcome = await client.runPromise(
      Effect.gen(function* () {
        const m = yield* Messenger
        const stage = { acknowledged: 0, failed: 0, attempted: 0, restarted: false, acknowledgedAfterRestart: 0 }
        const warmedUp = yield* Deferred.make<void>()
        const outageSeen = yield* Deferred.make<void>()
        // Asks until the service is back: some acknowledged after the restart (bounded, so nothing hangs).
        const worker = Effect.gen(function* () {
          while (stage.acknowledgedAfterRestart < 20 && stage.attempted < 5_000) {
            stage.attempted++
            const r = yield* m
              .ask(address("p1"), CounterAddRpc, { key: "restart", amount: 1 }, { timeoutMs: 1000 })
              .pipe(Effect.either)
            if (Either.isRight(r)) {
              stage.acknowledged++
              if (stage.restarted) stage.acknowledgedAfterRestart++
              if (stage.acknowledged === 20) yield* Deferred.succeed(warmedUp, undefined)
            } else {
              stage.failed++
              expect(["AskTimeoutError", "UnavailableError", "BusError"]).toContain(r.left._tag)
              yield* Deferred.succeed(outageSeen, undefined)
              // A pause before the next attempt, not a wait for anything.
              yield* Effect.sleep("20 millis")
            }
          }
        })
        const chaos = Effect.gen(function* () {
          yield* Deferred.await(warmedUp)
          yield* nats.kill
          yield* Deferred.await(outageSeen)
          yield* nats.restart
          stage.restarted = true
        })
        yield* Effect.all([worker, chaos], { concurrency: "unbounded" })
        const final = yield* eventually(m.ask(address("p1"), CounterGetRpc, { key: "restart" }))
        return { ...stage, final: final.value }
      })
    )
    // The outage was real, and the service came back through the same client.
    expect(outcome.failed).toBeGreaterThan(0)
    expect(outcome.acknowledgedAfterRestart).toBe(20)
    // Every acknowledged add was applied; none was applied twice (a failed ask may or may not have been).
    expect(outcome.final).toBeGreaterThanOrEqual(outcome.acknowledged)
    expect(outcome.final).toBeLessThanOrEqual(outcome.attempted)
  }, 60_000)
})
