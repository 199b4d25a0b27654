import { describe, expect, it } from "vitest"
import type { CoordinatorState } from "./coordinator.js"
import { checkStall, createStallBackstop } from "./stall.js"

/** Just what the backstop reads of the coordinator's state. */
const fakeCore = () => {
  const core = {
    inflight: { watermark: 1, size: 10 },
    stats: { completed: 0 },
    active: [1, 2],
    replayedTo: 0
  }
  return { core, view: core as unknown as CoordinatorState<unknown> }
}

describe("stall backstop", () => {
  it("never fires while completions come in, even with the watermark standing still", () => {
    const { core, view } = fakeCore()
    const b = createStallBackstop(1_000)
    for (let t = 0; t <= 10_000; t += 200) {
      core.stats.completed++
      expect(checkStall(b, view, t)).toBeUndefined()
    }
  })

  it("fires after the timeout without a completion, then backs off until a replay completes", () => {
    const { core, view } = fakeCore()
    const b = createStallBackstop(1_000)
    expect(checkStall(b, view, 0)).toBeUndefined()
    expect(checkStall(b, view, 999)).toBeUndefined()
    expect(checkStall(b, view, 1_000)).toContain("no completion for 1000 ms")
    // The recovery replays up to seq 50; completions trickle in, the watermark stays inside the replay.
    core.replayedTo = 50
    core.stats.completed++
    expect(checkStall(b, view, 1_100)).toBeUndefined()
    expect(checkStall(b, view, 2_099)).toBeUndefined()
    expect(checkStall(b, view, 3_099)).toBeUndefined()
    expect(checkStall(b, view, 3_100)).toContain("no completion for 2000 ms")
    expect(checkStall(b, view, 7_100)).toContain("no completion for 4000 ms")
    expect(checkStall(b, view, 15_100)).toContain("no completion for 8000 ms")
    // Capped at 8x.
    expect(checkStall(b, view, 23_100)).toContain("no completion for 8000 ms")
    // The replay completes: the base timeout again.
    core.inflight.watermark = 51
    expect(checkStall(b, view, 23_200)).toBeUndefined()
    expect(checkStall(b, view, 24_200)).toContain("no completion for 1000 ms")
  })

  it("is off with a zero timeout, and idle with nothing in flight or no worker", () => {
    const { core, view } = fakeCore()
    expect(checkStall(createStallBackstop(0), view, 60_000)).toBeUndefined()
    const b = createStallBackstop(1_000)
    core.inflight.size = 0
    expect(checkStall(b, view, 5_000)).toBeUndefined()
    core.inflight.size = 10
    core.active = []
    expect(checkStall(b, view, 10_000)).toBeUndefined()
  })
})
