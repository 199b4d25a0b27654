import { ActorStatus, type Heartbeat, MemberState } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { emptyView, type MembershipConfig, type MembershipView, stepMembership } from "./membership-view.js"

const config: MembershipConfig = { suspectAfterMs: 1500, leftAfterMs: 5000, forgetAfterMs: 60_000 }
const beat = (over: Partial<Heartbeat> = {}): Heartbeat => ({
  address: { cluster: "c", role: "worker", id: "w1" },
  load: 0,
  version: "1",
  status: ActorStatus.ACTOR_STATUS_RUNNING,
  incarnation: "i1",
  handled: 0,
  errored: 0,
  mailboxDepth: 0,
  restarts: 0,
  leaving: false,
  pid: 1,
  endpoints: {},
  roleStatus: {},
  ...over
})
const stateOf = (view: MembershipView) => view.get("worker/w1")?.state

describe("membership view", () => {
  it("joins on the first heartbeat, suspects after silence, then declares left", () => {
    let s = stepMembership(emptyView, config, { _tag: "Heartbeat", heartbeat: beat(), nowMs: 0 })
    expect(s.events.map((e) => e.member?.state)).toEqual([MemberState.MEMBER_STATE_JOINED])
    s = stepMembership(s.view, config, { _tag: "Tick", nowMs: 1500 })
    expect(s.events).toEqual([])
    s = stepMembership(s.view, config, { _tag: "Tick", nowMs: 1501 })
    expect(stateOf(s.view)).toBe(MemberState.MEMBER_STATE_SUSPECTED)
    expect(s.events[0]?.previous).toBe(MemberState.MEMBER_STATE_JOINED)
    s = stepMembership(s.view, config, { _tag: "Tick", nowMs: 5001 })
    expect(stateOf(s.view)).toBe(MemberState.MEMBER_STATE_LEFT)
    s = stepMembership(s.view, config, { _tag: "Tick", nowMs: 70_000 })
    expect(s.view.size).toBe(0)
  })

  it("a suspected member that beats again rejoins", () => {
    let s = stepMembership(emptyView, config, { _tag: "Heartbeat", heartbeat: beat(), nowMs: 0 })
    s = stepMembership(s.view, config, { _tag: "Tick", nowMs: 2000 })
    s = stepMembership(s.view, config, { _tag: "Heartbeat", heartbeat: beat(), nowMs: 2100 })
    expect(stateOf(s.view)).toBe(MemberState.MEMBER_STATE_JOINED)
    expect(s.events[0]?.previous).toBe(MemberState.MEMBER_STATE_SUSPECTED)
  })

  it("announces a restart (new incarnation) and a status change, but not a repeated heartbeat", () => {
    let s = stepMembership(emptyView, config, { _tag: "Heartbeat", heartbeat: beat(), nowMs: 0 })
    s = stepMembership(s.view, config, { _tag: "Heartbeat", heartbeat: beat(), nowMs: 100 })
    expect(s.events).toEqual([])
    s = stepMembership(s.view, config, { _tag: "Heartbeat", heartbeat: beat({ incarnation: "i2" }), nowMs: 200 })
    expect(s.events).toHaveLength(1)
    s = stepMembership(s.view, config, {
      _tag: "Heartbeat",
      heartbeat: beat({ incarnation: "i2", status: ActorStatus.ACTOR_STATUS_FAILED }),
      nowMs: 300
    })
    expect(s.events[0]?.member?.lastHeartbeat?.status).toBe(ActorStatus.ACTOR_STATUS_FAILED)
  })

  it("a leaving heartbeat removes the member at once", () => {
    let s = stepMembership(emptyView, config, { _tag: "Heartbeat", heartbeat: beat(), nowMs: 0 })
    s = stepMembership(s.view, config, { _tag: "Heartbeat", heartbeat: beat({ leaving: true }), nowMs: 10 })
    expect(stateOf(s.view)).toBe(MemberState.MEMBER_STATE_LEFT)
    expect(s.events).toHaveLength(1)
  })
})
