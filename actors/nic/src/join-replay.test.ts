import { describe, expect, it } from "vitest"
import type { RoundMsg } from "./core/index.js"
import { JoinReplay } from "./join-replay.js"

const round = (instance: number, round = 1): RoundMsg => ({
  _tag: "Round",
  instance,
  round,
  values: [],
  locked: [],
  decided: []
})

describe("JoinReplay", () => {
  it("keeps nothing while the engine takes part", () => {
    const replay = new JoinReplay()
    for (let i = 1; i <= 10; i++) replay.record({ from: "r2", msg: round(i) }, true)
    expect(replay.size).toBe(0)
    expect(replay.takeFrom(1)).toEqual([])
  })

  it("keeps what came while the engine was out and hands over the instances from the joined one", () => {
    const replay = new JoinReplay()
    replay.record({ from: "r2", msg: round(7) }, false)
    replay.record({ from: "r3", msg: round(8) }, false)
    replay.record({ from: "r2", msg: round(8, 2) }, false)
    expect(replay.takeFrom(8).map((r) => [r.from, r.msg.instance, r.msg.round])).toEqual([
      ["r3", 8, 1],
      ["r2", 8, 2]
    ])
    expect(replay.size).toBe(0)
  })

  it("forgets what it kept once the engine takes part again (it rejoined as a learner)", () => {
    const replay = new JoinReplay()
    replay.record({ from: "r2", msg: round(3) }, false)
    replay.record({ from: "r2", msg: round(4) }, true)
    expect(replay.size).toBe(0)
  })

  it("keeps only the last `limit` messages", () => {
    const replay = new JoinReplay(3)
    for (let i = 1; i <= 5; i++) replay.record({ from: "r2", msg: round(i) }, false)
    expect(replay.takeFrom(0).map((r) => r.msg.instance)).toEqual([3, 4, 5])
  })
})
