/**
 * The catch-up server's answers: missed decisions in one reply when they fit, in parts when they do not but
 * the log still holds them, and a snapshot only once the asked position has left the log.
 */
import { clientValue } from "@reef/nic"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { CatchUpServer, MAX_CATCH_UP_DECISION_BYTES } from "./catch-up-server.js"
import { createReplicaState } from "./replica-state.js"

/** Instances of about a fifth of one reply each: five of them fill it. */
const PAYLOAD_BYTES = Math.floor(MAX_CATCH_UP_DECISION_BYTES / 5)

const serverWith = (instances: number, logBytes = 64 * MAX_CATCH_UP_DECISION_BYTES) => {
  const state = createReplicaState({ id: "r1", group: "g", members: ["r1", "r2", "r3"], log: { maxBytes: logBytes } })
  for (let i = 1; i <= instances; i++) {
    state.decisions.append(i, [clientValue("r2", "00000000000000aa", i, new Uint8Array(PAYLOAD_BYTES))])
    state.appliedInstance = i
  }
  const server = new CatchUpServer({
    state,
    // Out of the group itself: answers at once instead of after its next decision.
    engineStatus: () => ({ joinInstance: instances + 1, rejoining: true, attempt: -1 }),
    schedule: Effect.succeed([{ fromInstance: 1, members: ["r1", "r2", "r3"] }]),
    nowMs: () => 0
  })
  return (fromInstance: number) => Effect.runPromise(server.catchUp({ group: "g", fromInstance }))
}

describe("catch-up server", () => {
  it("sends every missed decision in one reply when they fit", async () => {
    const reply = await serverWith(3)(1)
    expect(reply).toMatchObject({ more: false, hasSnapshot: false, joinInstance: 4 })
    expect(reply.decisions.map((d) => d.instance)).toEqual([1, 2, 3])
  })

  it("sends more than one reply's worth in parts, from the log, and the asker gets the rest by asking on", async () => {
    const ask = serverWith(12)
    const first = await ask(1)
    expect(first.hasSnapshot).toBe(false)
    expect(first.more).toBe(true)
    const got = first.decisions.map((d) => d.instance)
    expect(got.length).toBeGreaterThan(0)
    expect(got.length).toBeLessThan(12)
    let next = got.at(-1)! + 1
    const all = [...got]
    for (let part = 0; part < 12 && next <= 12; part++) {
      const reply = await ask(next)
      all.push(...reply.decisions.map((d) => d.instance))
      next = all.at(-1)! + 1
      if (!reply.more) break
    }
    expect(all).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
  })

  it("sends a snapshot once the asked position has left the log", async () => {
    const reply = await serverWith(12, 2 * MAX_CATCH_UP_DECISION_BYTES)(1)
    expect(reply.hasSnapshot).toBe(true)
    expect(reply.decisions).toEqual([])
  })
})
