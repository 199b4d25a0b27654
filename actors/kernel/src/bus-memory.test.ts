/**
 * `Bus.listen` over the in-memory bus: messages reach the listener in order, and a listener that throws (a
 * bug) is reported and does not stop the subscription.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Bus, type BusMessage } from "./bus.js"
import { memoryBusLayer } from "./bus-memory.js"
import type { BusError } from "./errors.js"

const utf8 = (s: string) => new TextEncoder().encode(s)
const text = (m: BusMessage) => new TextDecoder().decode(m.data)

describe("Bus.listen (in-memory)", () => {
  it.scoped("calls the listener for each message on the subject, in order, and a throw is reported", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const heard: Array<string> = []
      const errors: Array<BusError> = []
      yield* bus.listen(
        "a.*",
        (m) => {
          if (text(m) === "bad") throw new Error("listener bug")
          heard.push(`${m.subject}=${text(m)}`)
        },
        (error) => errors.push(error)
      )
      for (const [subject, data] of [
        ["a.1", "x"],
        ["b.1", "not mine"],
        ["a.2", "bad"],
        ["a.3", "y"]
      ] as const) {
        yield* bus.publish(subject, utf8(data))
      }
      for (let i = 0; i < 100 && heard.length < 2; i++) yield* Effect.yieldNow()
      expect(heard).toEqual(["a.1=x", "a.3=y"])
      expect(errors.map((e) => e.operation)).toEqual(["handle a message on a.*"])
    }).pipe(Effect.provide(memoryBusLayer))
  )
})
