/**
 * Issue 11's reproduction: a replica killed with SIGKILL and restarted under the same id is a new process.
 * Its new calls must be answered by their own commands, never by what its previous process proposed: Sets of
 * `x` through r3, kill -9 r3 while the others keep writing, restart it, Set `x` through it again. Every new
 * Set must be decided after the restart (a later instance, a higher version), a read through another
 * replica must see the last of them, and the whole history must be linearizable.
 */
import { GrpcCode } from "@reef/grpc"
import { checkLinearizable, HistoryRecorder, makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import { describe, expect, it } from "vitest"
import { settledGroupHashes, useGroup } from "./popuc-harness.js"

const fixture = useGroup({ n: 3, cluster: "restart" })

describe("a restarted replica is a new incarnation", () => {
  it("its new calls get their own results, not its previous process's", async () => {
    const recorder = new HistoryRecorder()
    const { addresses } = fixture.group
    const outcome = await Effect.runPromise(
      Effect.gen(function* () {
        const via = (index: number) => makeKvClient({ replicas: addresses, mode: "colocated", clientIndex: index })
        const [c1, c2, c3] = yield* Effect.all([via(0), via(1), via(2)])
        /** A recorded Set; ambiguous failures (UNAVAILABLE, DEADLINE_EXCEEDED) are unknown outcomes. */
        const set = (client: typeof c1, process: number, key: string, value: string) =>
          Effect.gen(function* () {
            const id = recorder.invoke(process, { _tag: "Set", key, value }, performance.now())
            const result = yield* Effect.either(client.set(key, Buffer.from(value)))
            if (result._tag === "Right") recorder.complete(id, { ok: true }, performance.now())
            else
              recorder.fail(
                id,
                result.left.code === GrpcCode.UNAVAILABLE || result.left.code === GrpcCode.DEADLINE_EXCEEDED
              )
            return result
          })
        const get = (client: typeof c1, process: number, key: string) =>
          Effect.gen(function* () {
            const id = recorder.invoke(process, { _tag: "Get", key }, performance.now())
            const r = yield* client.get(key)
            recorder.complete(
              id,
              r.found ? { found: true, value: Buffer.from(r.value).toString() } : { found: false },
              performance.now()
            )
            return r
          })

        // Background writers through r1 and r2 for the whole test: the group keeps deciding.
        let stop = false
        const writer = (client: typeof c1, process: number) =>
          Effect.gen(function* () {
            for (let i = 0; !stop; i++)
              yield* set(client, process, i % 2 === 0 ? "x" : `y${process}`, `w${process}-${i}`)
          })
        const writers = yield* Effect.fork(Effect.all([writer(c1, 10), writer(c2, 11)], { concurrency: 2 }))

        const before: Array<{ instance: number; version: number }> = []
        for (let i = 0; i < 30; i++) {
          const r = yield* set(c3, 0, "x", `old-${i}`)
          if (r._tag === "Right") before.push({ instance: r.right.instance, version: r.right.version })
        }
        const victim = fixture.group.processes.get("r3")!
        victim.child.kill("SIGKILL")
        yield* Effect.promise(() => victim.exited)
        // The others go on without r3 (its previous process's decisions fall further back in the log).
        const r1 = yield* c1.state(0)
        yield* c1.state(0).pipe(
          Effect.filterOrFail((s) => s.appliedInstance > r1.appliedInstance + 20),
          Effect.retry(Schedule.spaced("50 millis"))
        )
        const killedAt = (yield* c1.state(0)).appliedInstance
        yield* Effect.promise(() => fixture.group.start("r3"))

        // A fresh client of the restarted r3: retries while it answers UNAVAILABLE (not serving yet).
        const after: Array<{ instance: number; version: number }> = []
        const fresh = yield* makeKvClient({ replicas: addresses, mode: "colocated", clientIndex: 2 })
        for (let i = 0; i < 10; i++) {
          for (;;) {
            const r = yield* set(fresh, 1, "x", `new-${i}`)
            if (r._tag === "Right") {
              after.push({ instance: r.right.instance, version: r.right.version })
              break
            }
            expect(r.left.code).toBe(GrpcCode.UNAVAILABLE)
            yield* Effect.sleep("100 millis")
          }
        }
        stop = true
        yield* Fiber.join(writers)
        // Every write has been answered, so a read through r1 follows the last new Set.
        const read = yield* get(c1, 2, "x")
        return { before, after, killedAt, read }
      }).pipe(Effect.scoped)
    )
    const maxBefore = Math.max(...outcome.before.map((b) => b.version))
    for (const a of outcome.after) {
      expect(a.instance).toBeGreaterThan(outcome.killedAt)
      expect(a.version).toBeGreaterThan(maxBefore)
    }
    // Each new Set is a distinct write of `x`: its version grows.
    for (let i = 1; i < outcome.after.length; i++) {
      expect(outcome.after[i]!.version).toBeGreaterThan(outcome.after[i - 1]!.version)
    }
    expect(outcome.read.found).toBe(true)
    const result = checkLinearizable(recorder.entries())
    expect(result.ok ? "linearizable" : result).toBe("linearizable")
    const states = await Effect.runPromise(settledGroupHashes(fixture.group, fixture.group.ids))
    expect(new Set(states.map((s) => s.stateHash)).size).toBe(1)
  }, 180_000)
})
