/**
 * A 5-replica POPUC group (t = 2) of real processes: a linearizable history with clients spread over the
 * replicas, and the group keeps deciding with f = t = 2 replicas killed.
 */
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { check, recordWorkload, useGroup } from "./popuc-harness.js"

const fixture = useGroup({ n: 5, cluster: "popuc5" })

describe("POPUC replicated KV over 5 replica processes", () => {
  it("balanced clients produce a linearizable history", async () => {
    const entries = await Effect.runPromise(
      Effect.gen(function* () {
        const clients = yield* Effect.forEach([0, 1, 2, 3, 4], (i) =>
          makeKvClient({ replicas: fixture.group.addresses, mode: "balanced", clientIndex: i, timeoutMs: 15_000 })
        )
        return yield* recordWorkload(clients, { opsPerClient: 30, keys: 3, seed: 5, prefix: "five-" })
      }).pipe(Effect.scoped)
    )
    const result = check(entries)
    expect(result.ok ? "linearizable" : result).toBe("linearizable")
  }, 180_000)

  it("with f = t = 2 replicas killed, the other three keep serving writes and reads", async () => {
    for (const id of ["r4", "r5"]) {
      const p = fixture.group.processes.get(id)!
      p.child.kill("SIGKILL")
      await p.exited
    }
    const values = await Effect.runPromise(
      Effect.gen(function* () {
        const clients = yield* Effect.forEach([0, 1, 2], (i) =>
          makeKvClient({ replicas: fixture.group.addresses, mode: "colocated", clientIndex: i, timeoutMs: 15_000 })
        )
        for (let i = 0; i < 9; i++) yield* clients[i % 3]!.set("survivor", Buffer.from(String(i)))
        const read = yield* Effect.forEach(clients, (c) => c.get("survivor"))
        const states = yield* Effect.forEach([0, 1, 2], (i) => clients[0]!.state(i))
        return { read, goneReports: states.reduce((sum, s) => sum + (s.engine?.goneReports ?? 0), 0) }
      }).pipe(Effect.scoped)
    )
    expect(values.read.map((v) => Buffer.from(v.value).toString())).toEqual(["8", "8", "8"])
    // The survivors learned from the server that the killed engines' connections were gone (engine-loop.ts),
    // rather than only waiting out their round timers.
    expect(values.goneReports).toBeGreaterThan(0)
  }, 120_000)
})
