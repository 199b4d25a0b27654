/**
 * The pipelined NIC: each replica runs K = 2 consensus engines in parallel (threads), and every replica
 * merges their decisions in the same order (instance, then engine id). The merged log must still give a
 * linearizable history and identical replicas.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { check, runWorkload, useGroup } from "./popuc-harness.js"

// An engine that self-quits rejoins as a learner (core/learner.ts), but the host's state transfer, the
// fallback when a learner misses a value, is not supported with K > 1 yet: generous fixed rounds keep six
// engine threads on this shared 2-core machine inside their timing assumption.
const fixture = useGroup({ n: 3, cluster: "pipe", engines: 2, interactionMs: 60 })

describe("pipelined NIC (2 engines per replica)", () => {
  it("merged decisions give a linearizable history and identical replicas", async () => {
    const { entries, states } = await Effect.runPromise(
      runWorkload(fixture.group, 6, "colocated", { opsPerClient: 15, keys: 4, seed: 2, prefix: "pipe-" })
    )
    const result = check(entries)
    expect(result.ok ? "linearizable" : result).toBe("linearizable")
    expect(states.every((s) => s.engine?.engines === 2)).toBe(true)
  }, 180_000)
})
