import { describe, expect, it } from "vitest"
import { emptyBarrierState, onBarrierApplied, onBarrierFailed, onRead } from "./read-barrier.js"

describe("read barriers", () => {
  it("a read is answered only after a barrier proposed after it arrived", () => {
    let s = emptyBarrierState<string>()
    const a = onRead(s, "a")
    expect(a.propose).toBe(1)
    s = a.state
    const b = onRead(s, "b") // arrives while a's barrier is in flight: must wait for the next one
    expect(b.propose).toBeUndefined()
    s = b.state
    const first = onBarrierApplied(s, 1)
    expect(first.answer).toEqual(["a"])
    expect(first.propose).toBe(2)
    const second = onBarrierApplied(first.state, 2)
    expect(second.answer).toEqual(["b"])
    expect(second.propose).toBeUndefined()
    expect(second.state.inFlight).toBeUndefined()
  })

  it("one barrier serves every read that arrived before it was proposed", () => {
    let s = onRead(emptyBarrierState<number>(), 1).state
    for (const r of [2, 3, 4]) s = onRead(s, r).state
    const applied = onBarrierApplied(s, 1)
    expect(applied.answer).toEqual([1])
    expect(onBarrierApplied(applied.state, 2).answer).toEqual([2, 3, 4])
  })

  it("a barrier given up on answers nothing when it is applied after all", () => {
    let s = onRead(emptyBarrierState<string>(), "before").state
    const failed = onBarrierFailed(s)
    expect(failed.fail).toEqual(["before"])
    const next = onRead(failed.state, "after")
    expect(next.propose).toBe(2)
    s = next.state
    // Barrier 1 was still decided: "after" arrived after it was proposed, so it must keep waiting.
    expect(onBarrierApplied(s, 1).answer).toEqual([])
    expect(onBarrierApplied(s, 2).answer).toEqual(["after"])
  })
})
