import { describe, expect, it } from "vitest"
import { emptyBarrierState, onBarrierApplied, onRead } from "./read-barrier.js"

describe("read barriers", () => {
  it("a read is answered only after a barrier proposed after it arrived", () => {
    let s = emptyBarrierState<string>()
    const a = onRead(s, "a")
    expect(a.propose).toBe(true)
    s = a.state
    const b = onRead(s, "b") // arrives while a's barrier is in flight: must wait for the next one
    expect(b.propose).toBe(false)
    s = b.state
    const first = onBarrierApplied(s)
    expect(first.answer).toEqual(["a"])
    expect(first.propose).toBe(true)
    const second = onBarrierApplied(first.state)
    expect(second.answer).toEqual(["b"])
    expect(second.propose).toBe(false)
    expect(second.state.inFlight).toBe(false)
  })

  it("one barrier serves every read that arrived before it was proposed", () => {
    let s = onRead(emptyBarrierState<number>(), 1).state
    for (const r of [2, 3, 4]) s = onRead(s, r).state
    const applied = onBarrierApplied(s)
    expect(applied.answer).toEqual([1])
    expect(onBarrierApplied(applied.state).answer).toEqual([2, 3, 4])
  })
})
