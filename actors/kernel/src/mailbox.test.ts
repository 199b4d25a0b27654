/**
 * The mailbox: bounded offers, takes of what waits in order, a taker woken by the next offer, and a taker
 * interrupted while it waits taking nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { Mailbox } from "./mailbox.js"

describe("Mailbox", () => {
  it.effect("refuses offers beyond its capacity, except past-capacity ones", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<number>(2)
      expect([mailbox.offer(1), mailbox.offer(2), mailbox.offer(3)]).toEqual([true, true, false])
      mailbox.offerPastCapacity(4)
      expect(mailbox.size).toBe(3)
      expect(yield* mailbox.take(10)).toEqual([1, 2, 4])
      expect(mailbox.size).toBe(0)
    })
  )

  it.effect("takes at most max items, oldest first, across many offers and takes", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<number>(10_000)
      const taken: Array<number> = []
      let next = 0
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 300; i++) mailbox.offer(next++)
        const items = yield* mailbox.take(256)
        expect(items.length).toBeLessThanOrEqual(256)
        taken.push(...items)
      }
      while (mailbox.size > 0) taken.push(...(yield* mailbox.take(256)))
      expect(taken).toEqual(Array.from({ length: next }, (_, i) => i))
    })
  )

  it.live("wakes a waiting taker on the next offer", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<string>(4)
      const taker = yield* Effect.fork(mailbox.take(4))
      yield* Effect.yieldNow()
      mailbox.offer("a")
      expect(yield* Fiber.join(taker)).toEqual(["a"])
    })
  )

  it.live("a taker interrupted while it waits takes nothing", () =>
    Effect.gen(function* () {
      const mailbox = new Mailbox<string>(4)
      const taker = yield* Effect.fork(mailbox.take(4))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(taker)
      mailbox.offer("kept")
      expect(yield* mailbox.take(4)).toEqual(["kept"])
    })
  )
})
