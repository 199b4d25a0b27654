/** A run is a pure function of its seed: that is what makes a printed seed a reproduction. */
import { describe, expect, it } from "vitest"
import { EventQueue } from "./event-queue.js"
import { runInstanceSim } from "./instance-sim.js"
import { Prng } from "./prng.js"
import { SCENARIOS } from "./scenarios.js"

describe("simulator determinism", () => {
  it("the same seed replays the same run, for every scenario", () => {
    for (const [name, run] of SCENARIOS) {
      const a = run(4242)
      const b = run(4242)
      expect(b, name).toEqual(a)
    }
  }, 240_000)

  it("replaying with --n set to the drawn N is the same run (the draw is always made)", () => {
    for (const [name, run] of SCENARIOS) {
      const drawn = run(99)
      expect(run(99, { n: drawn.n }), name).toEqual(drawn)
    }
  }, 240_000)

  it("--n fixes N; without it N is drawn from the seed among 3, 5, 7, 9", () => {
    expect(runInstanceSim("crash", 7, { n: 9 }).n).toBe(9)
    const drawn = new Set([...Array(40).keys()].map((seed) => runInstanceSim("failure-free", seed).n))
    expect([...drawn].sort()).toEqual([3, 5, 7, 9])
  })

  it("splitmix32 is seeded and uniform enough", () => {
    const a = new Prng(1)
    const b = new Prng(1)
    const xs = [...Array(1000).keys()].map(() => a.float())
    expect(xs).toEqual([...Array(1000).keys()].map(() => b.float()))
    expect(new Prng(2).nextU32()).not.toBe(new Prng(1).nextU32())
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length
    expect(mean).toBeGreaterThan(0.45)
    expect(mean).toBeLessThan(0.55)
    const ints = new Set([...Array(200).keys()].map(() => a.int(3, 5)))
    expect([...ints].sort()).toEqual([3, 4, 5])
  })

  it("events at the same time run in insertion order", () => {
    const q = new EventQueue<string>()
    q.push(5, "b")
    q.push(1, "a")
    q.push(5, "c")
    q.push(3, "x")
    expect([q.pop(), q.pop(), q.pop(), q.pop(), q.pop()].map((e) => e?.event)).toEqual(["a", "x", "b", "c", undefined])
  })
})
