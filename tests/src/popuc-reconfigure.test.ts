/**
 * "Adding or removing a replica is decided through consensus (N stays 2t+1)": a running 3-replica group
 * grows to 5. The two new processes start knowing the target membership, catch up from the group, and can
 * only join once the change, proposed through consensus, has taken effect. Then it shrinks back to 3: a
 * replica that left refuses a membership change (its engine's Rejected is a failure, not a wait forever),
 * and the next change is answered with its own decision (issue 11, item 6).
 */
import { GrpcCode } from "@reef/grpc"
import { freePort } from "@reef/kernel"
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { eventually, startActorProcess } from "./harness.js"
import { useGroup } from "./popuc-harness.js"

const cluster = "reconf"
const fixture = useGroup({ n: 3, cluster })
/** Every replica's KV address once the group has grown to 5 (set by the first test). */
let grown: ReadonlyArray<string> = []

describe("membership change through consensus", () => {
  it("a 3-replica group grows to 5 and every replica ends with the same state", async () => {
    const all = ["r1", "r2", "r3", "r4", "r5"]
    const newPorts = await Promise.all([0, 1].map(() => Effect.runPromise(freePort)))
    const addresses = [...fixture.group.addresses, ...newPorts.map((p) => `127.0.0.1:${p}`)]
    await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* makeKvClient({ replicas: fixture.group.addresses, mode: "leader" })
        yield* client.set("before", Buffer.from("3 replicas"))
        // An invalid member list is refused at the edge.
        const refused = yield* client.reconfigure(0, ["r1", "r2"]).pipe(Effect.flip)
        expect(refused.code).toBe(GrpcCode.INVALID_ARGUMENT)
      }).pipe(Effect.scoped)
    )
    // The new members are ready (joined and caught up) only once the change that adds them took effect.
    const joining = Promise.all(
      ["r4", "r5"].map((id, i) =>
        startActorProcess(fixture.harness, {
          role: "replica",
          id,
          natsUrl: fixture.nats.url,
          cluster,
          extraArgs: ["--group", "kv", "--members", all.join(","), "--kv-port", String(newPorts[i]!)]
        })
      )
    )
    const decided = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* makeKvClient({ replicas: fixture.group.addresses, mode: "leader" })
        return yield* client.reconfigure(0, all)
      }).pipe(Effect.scoped)
    )
    expect(decided.decidedInstance).toBeGreaterThan(0)
    await joining
    const states = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* makeKvClient({ replicas: addresses, mode: "colocated", clientIndex: 4 })
        yield* eventually(client.set("after", Buffer.from("5 replicas")), 60)
        return yield* eventually(
          Effect.forEach(addresses, (_, i) => client.state(i)).pipe(
            Effect.filterOrFail((s) => new Set(s.map((x) => `${x.appliedCommands}/${x.stateHash}`)).size === 1)
          ),
          60
        )
      }).pipe(Effect.scoped)
    )
    expect(states.map((s) => s.members.length)).toEqual([5, 5, 5, 5, 5])
    expect(states[4]!.keys).toBe(2)
    grown = addresses
  }, 180_000)

  it("a replica that left refuses a change with its engine's reason; the next change gets its own decision", async () => {
    expect(grown).toHaveLength(5)
    const three = ["r1", "r2", "r3"]
    await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* makeKvClient({ replicas: grown, mode: "leader", timeoutMs: 30_000 })
        const shrunk = yield* client.reconfigure(0, three)
        // The change takes effect a few instances after its decision (the membership delay); well past that, r4
        // is out of the group and its engine refuses instead of queueing (a Rejected that must fail, not wait).
        yield* eventually(
          client.set("shrunk", Buffer.from("3 replicas")).pipe(
            Effect.zipRight(client.state(0)),
            Effect.filterOrFail((s) => s.appliedInstance >= shrunk.decidedInstance + 10)
          ),
          60
        )
        const refused = yield* client.reconfigure(3, three).pipe(Effect.flip)
        expect(refused.code).toBe(GrpcCode.UNAVAILABLE)
        expect(refused.details).toMatch(/refused the membership change: this process left the group/)
        // A later change through a member is answered by its own membership value, decided after the first.
        const again = yield* client.reconfigure(1, three)
        expect(again.decidedInstance).toBeGreaterThan(shrunk.decidedInstance)
        const states = yield* Effect.forEach([0, 1, 2], (i) => client.state(i))
        expect(states.map((s) => s.members)).toEqual([three, three, three])
      }).pipe(Effect.scoped)
    )
  }, 120_000)
})
