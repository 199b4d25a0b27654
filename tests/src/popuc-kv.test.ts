/**
 * The POPUC replicated KV end to end: replica processes (each with its NIC engine thread) over a spawned
 * nats-server, concurrent gRPC clients in every deployment mode, recorded histories checked for
 * linearizability, a replica killed and restarted (it rejoins with the same state hash), malformed round
 * messages injected on an engine subject, and bad gRPC arguments.
 */
import { BinaryWriter } from "@bufbuild/protobuf/wire"
import { Client, credentials, status } from "@grpc/grpc-js"
import { connect } from "@nats-io/transport-node"
import { engineSubject } from "@reef/nic"
import { CompareAndSetRequest, SetRequest } from "@reef/proto"
import { type KvClient, makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { describe, expect, it } from "vitest"
import { eventually } from "./harness.js"
import { check, recordWorkload, settledGroupHashes, useGroup, withGroupClients } from "./popuc-harness.js"

const cluster = "popuc"
const fixture = useGroup({ n: 3, cluster })

const withClients = <A, E>(
  count: number,
  mode: "leader" | "balanced" | "colocated",
  use: (clients: ReadonlyArray<KvClient>) => Effect.Effect<A, E>
) => withGroupClients(fixture.group, count, mode, use)

const settledHashes = (ids: ReadonlyArray<string>) => settledGroupHashes(fixture.group, ids)

describe("POPUC replicated KV over 3 replica processes", () => {
  for (const mode of ["colocated", "balanced", "leader"] as const) {
    it(`concurrent clients (${mode}) produce a linearizable history and identical replicas`, async () => {
      const entries = await Effect.runPromise(
        withClients(6, mode, (clients) =>
          recordWorkload(clients, { opsPerClient: 40, keys: 4, seed: mode.length, prefix: `${mode}-` })
        )
      )
      const result = check(entries)
      expect(result.ok ? "linearizable" : result).toBe("linearizable")
      expect(entries.filter((e) => e.completeMs !== undefined).length).toBeGreaterThan(200)
      const states = await Effect.runPromise(settledHashes(fixture.group.ids))
      expect(states.every((s) => s.members.length === 3)).toBe(true)
    }, 180_000)
  }

  for (const transport of ["session", "unary"] as const) {
    it(`bad arguments get INVALID_ARGUMENT with a message (${transport})`, async () => {
      const [errors, after] = await Effect.runPromise(
        Effect.gen(function* () {
          const client = yield* makeKvClient({ replicas: fixture.group.addresses, transport })
          const errors = yield* Effect.all([
            client.set("", Buffer.from("x")).pipe(Effect.flip),
            client.set("k", Buffer.alloc(70 * 1024)).pipe(Effect.flip),
            client.get("").pipe(Effect.flip),
            client.set("x".repeat(2000), Buffer.from("v")).pipe(Effect.flip),
            client.compareAndSet("k", null, Buffer.alloc(70 * 1024)).pipe(Effect.flip)
          ])
          // A session stays open after its requests fail: the next request on it succeeds.
          const after = yield* client.set(`after-bad-${transport}`, Buffer.from("ok"))
          return [errors, after] as const
        }).pipe(Effect.scoped)
      )
      expect(errors.map((e) => e.code)).toEqual([3, 3, 3, 3, 3])
      expect(errors[0]!.details).toContain("key")
      expect(errors[1]!.details).toContain("limit")
      expect(after.instance).toBeGreaterThan(0)
    })
  }

  it("a key that is not valid UTF-8, or an ambiguous CompareAndSet, is refused with INVALID_ARGUMENT", async () => {
    const client = new Client(fixture.group.addresses[0]!, credentials.createInsecure())
    const raw = (method: string, request: Uint8Array) =>
      new Promise<number>((resolve) =>
        client.makeUnaryRequest(
          `/reef.v1.KV/${method}`,
          (bytes: Uint8Array) => Buffer.from(bytes),
          (bytes: Buffer) => bytes,
          request,
          (error) => resolve(error?.code ?? status.OK)
        )
      )
    /** A request whose field 1 (the key) holds `bytes`, which are not UTF-8. */
    const invalidKey = (bytes: ReadonlyArray<number>) =>
      new BinaryWriter().uint32(10).bytes(new Uint8Array(bytes)).finish()
    try {
      const codes = [
        await raw("Get", invalidKey([0x6b, 0xff])),
        await raw("Set", invalidKey([0x6b, 0xfe])),
        await raw(
          "CompareAndSet",
          CompareAndSetRequest.encode({
            key: "k",
            expected: Buffer.from("old"),
            expectAbsent: true,
            value: Buffer.from("new")
          }).finish()
        ),
        // A valid key with a real U+FFFD is a key like any other.
        await raw("Set", SetRequest.encode({ key: "k\uFFFD", value: Buffer.from("v") }).finish())
      ]
      expect(codes).toEqual([status.INVALID_ARGUMENT, status.INVALID_ARGUMENT, status.INVALID_ARGUMENT, status.OK])
    } finally {
      client.close()
    }
    // Our client refuses a key it could not send as UTF-8 before sending anything.
    const refused = await Effect.runPromise(
      Effect.gen(function* () {
        const kv = yield* makeKvClient({ replicas: fixture.group.addresses })
        return yield* kv.set("k\uD800", Buffer.from("v")).pipe(Effect.flip)
      }).pipe(Effect.scoped)
    )
    expect(refused.code).toBe(status.INVALID_ARGUMENT)
  })

  it("malformed round messages on an engine subject are dropped and counted, never crash the engine", async () => {
    const nc = await connect({ servers: fixture.nats.url })
    const subject = engineSubject(cluster, "kv", "r1")
    for (const garbage of [new Uint8Array([1, 2, 3]), new Uint8Array(0), Buffer.from("not protobuf at all")]) {
      nc.publish(subject, garbage)
    }
    await nc.flush()
    await nc.close()
    const r1 = fixture.group.processes.get("r1")!
    await Effect.runPromise(
      eventually(
        Effect.sync(() => r1.lines.filter((l) => l.includes("dropped a malformed round message")).length).pipe(
          Effect.filterOrFail((n) => n >= 3)
        )
      )
    )
    // The group still decides: a write through r1 is applied everywhere.
    await Effect.runPromise(withClients(1, "colocated", ([client]) => client!.set("after-garbage", Buffer.from("ok"))))
    await Effect.runPromise(settledHashes(fixture.group.ids))
    expect(r1.child.exitCode).toBeNull()
  }, 60_000)

  it("a killed replica does not stop the others; restarted, it rejoins with the same state hash", async () => {
    const victim = fixture.group.processes.get("r3")!
    victim.child.kill("SIGKILL")
    await victim.exited
    // Clients of the surviving replicas keep being served.
    const served = await Effect.runPromise(
      Effect.gen(function* () {
        const clients = yield* Effect.forEach([0, 1], (i) =>
          makeKvClient({ replicas: fixture.group.addresses, mode: "colocated", clientIndex: i })
        )
        let ok = 0
        for (let i = 0; i < 20; i++) {
          yield* clients[i % 2]!.set(`during-outage-${i}`, Buffer.from(String(i)))
          ok++
        }
        return ok
      }).pipe(Effect.scoped)
    )
    expect(served).toBe(20)
    await fixture.group.start("r3")
    const lines = fixture.group.processes.get("r3")!.lines
    await Effect.runPromise(
      eventually(Effect.sync(() => lines.some((l) => l.includes("joined"))).pipe(Effect.filterOrFail((x) => x)), 60)
    )
    // New writes after the rejoin reach r3 too, and all three states are identical.
    await Effect.runPromise(
      withClients(3, "colocated", (clients) =>
        Effect.forEach(clients, (c, i) =>
          c
            .set(`after-rejoin-${i}`, Buffer.from("v"))
            .pipe(Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.compose(Schedule.recurs(50)))))
        )
      )
    )
    const states = await Effect.runPromise(settledHashes(fixture.group.ids))
    expect(states.map((s) => s.replica).sort()).toEqual(["r1", "r2", "r3"])
    expect(new Set(states.map((s) => s.stateHash)).size).toBe(1)
    expect(states[0]!.keys).toBeGreaterThan(20)
  }, 180_000)
})
