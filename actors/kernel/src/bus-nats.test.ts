/**
 * The NATS bus's header handling against a real nats-server: fixed header sets (encoded once) and per-message
 * headers arrive intact, every time.
 */
import { describe, expect, it } from "@effect/vitest"
import { connect } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import { type BusMessage, FixedHeaders } from "./bus.js"
import { makeNatsBus } from "./bus-nats.js"
import { startNatsServer } from "./nats-server.js"

describe("NATS bus headers", () => {
  it.scopedLive("sends fixed and per-message headers and reads them back", () =>
    Effect.gen(function* () {
      const server = yield* startNatsServer({ jetstream: false })
      const nc = yield* Effect.acquireRelease(
        Effect.promise(() => connect({ servers: server.url })),
        (c) => Effect.promise(() => c.close())
      )
      const bus = makeNatsBus(nc)
      const received: Array<BusMessage> = []
      yield* bus.listen(
        "h",
        (m) => received.push(m),
        () => {}
      )
      yield* bus.flush
      const fixed = new FixedHeaders([
        ["reef-type", "reef.v1.A"],
        ["reef-error", "1"]
      ])
      yield* bus.publish("h", new Uint8Array([1]), fixed)
      yield* bus.publish("h", new Uint8Array([2]), fixed)
      yield* bus.publish(
        "h",
        new Uint8Array([3]),
        new Map([["traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"]])
      )
      yield* bus.publish("h", new Uint8Array([4]))
      yield* bus.flush
      yield* Effect.promise(async () => {
        while (received.length < 4) await new Promise((resolve) => setTimeout(resolve, 5))
      })
      expect(received.map((m) => [m.data[0], Object.fromEntries(m.headers)])).toEqual([
        [1, { "reef-type": "reef.v1.A", "reef-error": "1" }],
        [2, { "reef-type": "reef.v1.A", "reef-error": "1" }],
        [3, { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }],
        [4, {}]
      ])
    })
  )

  it("fixed headers refuse to change", () => {
    const fixed = new FixedHeaders([["reef-type", "x"]])
    expect(fixed.get("reef-type")).toBe("x")
    expect(() => fixed.set("reef-type", "y")).toThrow(TypeError)
    expect(() => fixed.delete("reef-type")).toThrow(TypeError)
    expect(() => fixed.clear()).toThrow(TypeError)
    expect([...fixed]).toEqual([["reef-type", "x"]])
  })
})
