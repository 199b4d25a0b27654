/** sync-start (Alg. 3) against the paper's sentences. */
import { describe, expect, it } from "vitest"
import { createSyncStart, leaderOf, stepSyncStart } from "./sync-start.js"

const members = ["p2", "p0", "p1"]

describe("sync-start (Alg. 3)", () => {
  it("using a leader to unequivocally broadcast a starting signal: leader ← min(Π)", () => {
    const s = createSyncStart("p1", members)
    expect(leaderOf(s)).toBe("p0")
    const r = stepSyncStart(s, { _tag: "Trigger" })
    expect(r.out).toEqual([{ _tag: "Send", to: ["p0"], msg: { _tag: "StartRequest" } }])
  })

  it("the leader sends start to every process once, and starts itself", () => {
    const leader = stepSyncStart(createSyncStart("p0", members), { _tag: "Trigger" })
    expect(leader.out).toEqual([{ _tag: "Send", to: ["p1", "p2"], msg: { _tag: "Start" } }, { _tag: "Begin" }])
    expect(stepSyncStart(leader.state, { _tag: "Trigger" }).out).toEqual([])
    // A late request is answered to the requester only.
    const late = stepSyncStart(leader.state, { _tag: "Receive", from: "p2", msg: { _tag: "StartRequest" } })
    expect(late.out).toEqual([{ _tag: "Send", to: ["p2"], msg: { _tag: "Start" } }])
  })

  it("upon recv(start-request): send(start) to every p_j ∈ Π", () => {
    const r = stepSyncStart(createSyncStart("p0", members), {
      _tag: "Receive",
      from: "p1",
      msg: { _tag: "StartRequest" }
    })
    expect(r.out).toEqual([{ _tag: "Send", to: ["p1", "p2"], msg: { _tag: "Start" } }, { _tag: "Begin" }])
  })

  it("upon recv(start): start — once", () => {
    const first = stepSyncStart(createSyncStart("p2", members), { _tag: "Receive", from: "p0", msg: { _tag: "Start" } })
    expect(first.out).toEqual([{ _tag: "Begin" }])
    expect(stepSyncStart(first.state, { _tag: "Receive", from: "p0", msg: { _tag: "Start" } }).out).toEqual([])
  })

  it("upon failure_P(p_j) and started = false: Π ← Π \\ {p_j}; leader ← min(Π); sync-start", () => {
    const triggered = stepSyncStart(createSyncStart("p2", members), { _tag: "Trigger" }).state
    const r = stepSyncStart(triggered, { _tag: "Failure", process: "p0" })
    expect(leaderOf(r.state)).toBe("p1")
    expect(r.out).toEqual([{ _tag: "Send", to: ["p1"], msg: { _tag: "StartRequest" } }])
    // The new leader starts everyone, even if it already began (the old leader may have crashed mid-send).
    const begun = stepSyncStart(createSyncStart("p1", members), {
      _tag: "Receive",
      from: "p0",
      msg: { _tag: "Start" }
    }).state
    const lead = stepSyncStart(begun, { _tag: "Failure", process: "p0" })
    expect(lead.out).toEqual([{ _tag: "Send", to: ["p2"], msg: { _tag: "Start" } }])
  })
})
