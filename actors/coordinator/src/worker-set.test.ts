import { type Member, MemberState, type MembershipEvent } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { WorkerSet } from "./worker-set.js"

const event = (id: string, incarnation: string, state = MemberState.MEMBER_STATE_JOINED): MembershipEvent => ({
  member: {
    address: { cluster: "c", role: "worker", id },
    state,
    lastHeartbeat: { incarnation } as Member["lastHeartbeat"],
    lastSeenMs: 0
  },
  previous: MemberState.MEMBER_STATE_UNSPECIFIED
})

describe("WorkerSet", () => {
  it("a worker restarted with the same id is a change: its new incarnation replaces the old", () => {
    const set = new WorkerSet()
    expect(set.update(event("w2", "a"))).toEqual([{ id: "w2", incarnation: "a" }])
    expect(set.update(event("w1", "b"))).toEqual([
      { id: "w1", incarnation: "b" },
      { id: "w2", incarnation: "a" }
    ])
    expect(set.update(event("w1", "b"))).toBeUndefined()
    expect(set.update(event("w1", "c"))).toEqual([
      { id: "w1", incarnation: "c" },
      { id: "w2", incarnation: "a" }
    ])
  })

  it("a worker that left gets no new work; a suspected one still does", () => {
    const set = new WorkerSet()
    set.update(event("w1", "a"))
    expect(set.update(event("w1", "a", MemberState.MEMBER_STATE_SUSPECTED))).toBeUndefined()
    expect(set.update(event("w1", "a", MemberState.MEMBER_STATE_LEFT))).toEqual([])
  })
})
