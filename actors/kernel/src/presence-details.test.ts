import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "./actor-runtime.js"
import { counterActor } from "./counter-actor.js"
import { memoryKernelLayer } from "./kernel-layer.js"
import { isJoined, Membership } from "./membership.js"
import { makePresenceDetails, PresenceDetails } from "./presence-details.js"

describe("PresenceDetails", () => {
  it.effect("process endpoints go to every actor, an actor's own only to it", () =>
    Effect.gen(function* () {
      const details = makePresenceDetails()
      yield* details.announce({ metrics: "http://127.0.0.1:9464/metrics" })
      yield* details.announce({ kv: "127.0.0.1:7001" }, { role: "replica", id: "r1" })
      expect(yield* details.detailsOf({ role: "replica", id: "r1" })).toEqual({
        endpoints: { metrics: "http://127.0.0.1:9464/metrics", kv: "127.0.0.1:7001" },
        roleStatus: {}
      })
      expect((yield* details.detailsOf({ role: "nic", id: "r1" })).endpoints).toEqual({
        metrics: "http://127.0.0.1:9464/metrics"
      })
    })
  )

  it.effect("a status reader that fails or dies keeps the last status", () =>
    Effect.gen(function* () {
      const details = makePresenceDetails()
      const actor = { role: "replica", id: "r1" }
      let calls = 0
      yield* details.reportStatus(
        actor,
        Effect.suspend(() => {
          calls++
          if (calls === 2) return Effect.die("bug in a reader")
          return Effect.succeed({ applied: String(calls) })
        })
      )
      expect((yield* details.detailsOf(actor)).roleStatus).toEqual({ applied: "1" })
      expect((yield* details.detailsOf(actor)).roleStatus).toEqual({ applied: "1" })
      expect((yield* details.detailsOf(actor)).roleStatus).toEqual({ applied: "3" })
    })
  )

  it.live("heartbeats carry the details to every membership view", () =>
    Effect.gen(function* () {
      const details = yield* PresenceDetails
      yield* spawn(counterActor, "c1")
      yield* details.announce({ grpc: "127.0.0.1:50051" }, { role: "counter", id: "c1" })
      yield* details.reportStatus({ role: "counter", id: "c1" }, Effect.succeed({ keys: "0" }))
      const membership = yield* Membership
      const [member] = yield* membership.awaitMembers((ms) =>
        ms.some((m) => isJoined(m) && m.lastHeartbeat?.endpoints.grpc !== undefined)
      )
      expect(member?.lastHeartbeat?.endpoints).toEqual({ grpc: "127.0.0.1:50051" })
      expect(member?.lastHeartbeat?.roleStatus).toEqual({ keys: "0" })
    }).pipe(Effect.scoped, Effect.provide(memoryKernelLayer({ heartbeatIntervalMs: 20 })))
  )
})
