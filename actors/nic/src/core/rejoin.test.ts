/**
 * The rejoin core, against the sentences of issue 11 and the paper it implements: "a process that self-quit
 * [may] asynchronously ask for missing values (i.e., state transfer) and start reproposing once it has caught
 * up"; "`reef ready` means ready: ... only once it has joined the running group and applied up to the
 * instance at which it joined"; "a restarted member joins as a rejoiner from the start".
 */
import { describe, expect, it } from "vitest"
import {
  choosePeer,
  createRejoin,
  learnMs,
  mayInstallSnapshot,
  type PeerAnswer,
  peerStatus,
  type RejoinInput,
  type RejoinOutput,
  type RejoinParams,
  type RejoinState,
  stepRejoin,
  watchdogMs
} from "./rejoin.js"

const params: RejoinParams = { self: "r3", members: ["r1", "r2", "r3"], roundPeriodMs: 10 }

const answer = (peer: string, joinInstance: number, extra: Partial<PeerAnswer> = {}): PeerAnswer => ({
  peer,
  joinInstance,
  rejoining: false,
  snapshot: false,
  member: true,
  attempt: 0,
  ...extra
})

/** The engine self-quit: before opening anything (`instance` 0), or after taking part in `attempt` of `instance`. */
const crashed = (nowMs: number, instance = 0, attempt = 0): RejoinInput => ({
  _tag: "EngineCrashed",
  nowMs,
  instance,
  attempt,
  entered: instance > 0
})

/** Steps a rejoin core and keeps every output, for assertions on what the shell was told. */
class Driver {
  state: RejoinState
  out: Array<RejoinOutput> = []
  constructor(p: RejoinParams = params) {
    this.state = createRejoin(p)
  }
  step(input: RejoinInput): ReadonlyArray<RejoinOutput> {
    const r = stepRejoin(this.state, input)
    this.state = r.state
    this.out.push(...r.out)
    return r.out
  }
  /** Answers the last `Ask`. */
  answer(nowMs: number, answers: ReadonlyArray<PeerAnswer>): ReadonlyArray<RejoinOutput> {
    return this.step({ _tag: "Answers", ask: this.state.asked, nowMs, answers })
  }
  /** Fires the last timer set. */
  fire(nowMs: number): ReadonlyArray<RejoinOutput> {
    return this.step({ _tag: "Timer", nowMs, id: this.state.timer })
  }
  tags(outputs: ReadonlyArray<RejoinOutput> = this.out): ReadonlyArray<string> {
    return outputs.filter((o) => o._tag !== "Log").map((o) => o._tag)
  }
}

describe("rejoin core", () => {
  it("a new group, every peer answering that nothing was decided, sync-starts and serves at once", () => {
    const d = new Driver()
    expect(d.step({ _tag: "Start", nowMs: 0 })).toEqual([{ _tag: "Ask", ask: 1, fromInstance: 1 }])
    expect(d.tags(d.answer(5, [answer("r1", 1), answer("r2", 1)]))).toEqual(["SyncStart", "Serve"])
    expect(d.state.phase._tag).toBe("Running")
    expect(d.state.serving).toBe(true)
  })

  it("bootstrap barrier: waits for every peer, then a majority after allPeersMs, then anyone after majorityMs", () => {
    const five = { ...params, self: "r1", members: ["r1", "r2", "r3", "r4", "r5"] }
    const d = new Driver(five)
    d.step({ _tag: "Start", nowMs: 0 })
    // Two of four peers answer: keep asking every 100 ms.
    expect(d.tags(d.answer(50, [answer("r2", 1), answer("r3", 1)]))).toEqual(["SetTimer"])
    expect(d.tags(d.fire(150))).toEqual(["Ask"])
    // Past 10 s, two of four (a majority of the group with this process) is enough.
    expect(d.tags(d.answer(10_001, [answer("r2", 1), answer("r3", 1)]))).toEqual(["SyncStart", "Serve"])
    expect(d.out.some((o) => o._tag === "Log" && o.message.includes("2 of 4 peers"))).toBe(true)

    const alone = new Driver(five)
    alone.step({ _tag: "Start", nowMs: 0 })
    // One of four peers: keeps waiting for a majority until 60 s.
    expect(alone.tags(alone.answer(20_000, [answer("r2", 1)]))).toEqual(["SetTimer"])
    alone.fire(20_100)
    expect(alone.tags(alone.answer(60_001, [answer("r2", 1)]))).toEqual(["SyncStart", "Serve"])
  })

  it("a restarted member joins the running group as a rejoiner from the start, and serves only once caught up", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    const joined = d.answer(3, [answer("r1", 1190), answer("r2", 1189)])
    expect(joined.find((o) => o._tag === "Join")).toEqual({
      _tag: "Join",
      peer: "r1",
      joinInstance: 1190,
      startNow: true,
      collapsed: false,
      attempt: 0,
      snapshotAt: undefined
    })
    expect(d.tags(joined)).not.toContain("SyncStart")
    expect(d.state.serving).toBe(false)
    // The transferred decisions are applied one by one: not serving before the last one before 1190.
    expect(d.tags(d.step({ _tag: "Applied", instance: 1188 }))).toEqual([])
    expect(d.tags(d.step({ _tag: "Applied", instance: 1189 }))).toEqual(["Serve"])
    expect(d.state.phase._tag).toBe("Joined")
    d.step({ _tag: "Applied", instance: 1190 })
    expect(d.state.phase._tag).toBe("Running")
    // Serve is said once.
    d.step({ _tag: "Applied", instance: 1191 })
    expect(d.out.filter((o) => o._tag === "Serve")).toHaveLength(1)
  })

  it("prefers a peer whose engine runs; a collapsed group restarts behind its lowest id", () => {
    expect(choosePeer("r2", [answer("r1", 50, { rejoining: true }), answer("r3", 40)], 2, undefined)).toEqual({
      peer: "r3",
      joinInstance: 40,
      snapshot: false,
      startNow: true,
      collapsed: false,
      attempt: 0
    })
    const collapsed = [answer("r1", 50, { rejoining: true }), answer("r3", 52, { rejoining: true })]
    expect(choosePeer("r2", collapsed, 2, undefined)).toMatchObject({
      peer: "r3",
      joinInstance: 52,
      startNow: false,
      collapsed: true,
      attempt: 1
    })
    expect(choosePeer("r0", collapsed, 2, undefined)).toMatchObject({ peer: "r3", startNow: true, collapsed: true })
    // Nothing decided anywhere, or a group this process is not a member of yet: no choice.
    expect(choosePeer("r2", [answer("r1", 1), answer("r3", 1)], 2, undefined)).toBeUndefined()
    expect(choosePeer("r4", [answer("r1", 9, { member: false })], 1, undefined)).toBeUndefined()
  })

  it("never takes part twice in one attempt: it waits for the group to decide the instance it quit", () => {
    const running = [answer("r1", 40, { attempt: 0 }), answer("r2", 40, { attempt: 0 })]
    expect(choosePeer("r3", running, 2, { instance: 40, attempt: 0, entered: true })).toBeUndefined()
    // The group moved on to attempt 1 of 40, or decided 40: it joins.
    const again = [answer("r1", 40, { attempt: 1 }), answer("r2", 40, { rejoining: true, attempt: 0 })]
    expect(choosePeer("r3", again, 2, { instance: 40, attempt: 0, entered: true })).toMatchObject({
      joinInstance: 40,
      attempt: 1
    })
    expect(choosePeer("r3", [answer("r1", 41)], 2, { instance: 40, attempt: 0, entered: true })).toMatchObject({
      joinInstance: 41,
      attempt: 0
    })
  })

  it("a collapsed group reopens its instance only with every peer's answer, above every attempt taken part in", () => {
    const quitters = [
      answer("r1", 40, { rejoining: true, attempt: 2 }),
      answer("r2", 40, { rejoining: true, attempt: 0 })
    ]
    // One peer silent: it may have decided 40 and be slow to say so.
    expect(choosePeer("r3", quitters.slice(0, 1), 2, { instance: 40, attempt: 1, entered: true })).toBeUndefined()
    expect(choosePeer("r3", quitters, 2, { instance: 40, attempt: 1, entered: true })).toMatchObject({
      collapsed: true,
      attempt: 3
    })
    expect(choosePeer("r3", quitters, 2, { instance: 40, attempt: 5, entered: true })).toMatchObject({ attempt: 6 })
    // A restarted peer that knows nothing (join instance 1) counts as an answer, not as a choice.
    const restarted = [answer("r1", 1, { rejoining: true, attempt: -1 }), quitters[1]!]
    expect(choosePeer("r3", restarted, 2, undefined)).toMatchObject({ joinInstance: 40, attempt: 1, startNow: false })
  })

  it("says where it is: taking part (in which attempt) or rejoining (and the attempt it quit)", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    d.answer(1, [answer("r1", 40, { rejoining: true, attempt: 0 }), answer("r2", 40, { rejoining: true, attempt: 0 })])
    expect(peerStatus(d.state)).toEqual({ joinInstance: 1, rejoining: true, attempt: -1 })
    d.step({ _tag: "Applied", instance: 39 })
    // Following the restart leader r1: not taking part until the engine opens the attempt.
    expect(peerStatus(d.state)).toEqual({ joinInstance: 40, rejoining: true, attempt: -1 })
    d.step({ _tag: "EngineStarted", instance: 40, attempt: 1 })
    expect(peerStatus(d.state)).toEqual({ joinInstance: 40, rejoining: false, attempt: 1 })
    d.step(crashed(50, 40, 1))
    expect(peerStatus(d.state)).toEqual({ joinInstance: 40, rejoining: true, attempt: 1 })
  })

  it("after a self-quit the engine gets a few rounds to catch up as a learner before peers are asked", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    d.answer(1, [answer("r1", 1), answer("r2", 1)])
    d.step({ _tag: "Applied", instance: 30 })
    const quit = d.step(crashed(100))
    expect(quit).toEqual([{ _tag: "SetTimer", id: d.state.timer, afterMs: learnMs(params) }])
    expect(d.state.phase._tag).toBe("Learning")
    d.step({ _tag: "EngineRejoined", nowMs: 120, instance: 32 })
    d.step({ _tag: "Applied", instance: 32 })
    expect(d.state.phase._tag).toBe("Running")
    // The learning timer that was set is stale now: no ask.
    expect(d.step({ _tag: "Timer", nowMs: 200, id: d.state.timer - 1 })).toEqual([])
    expect(d.state.learnerRejoins).toBe(1)

    // A second self-quit the learner does not recover from: peers are asked at the timer, from the position.
    d.step(crashed(300))
    expect(d.fire(400)).toEqual([{ _tag: "Ask", ask: d.state.asked, fromInstance: 33 }])
    expect(d.tags(d.answer(410, [answer("r1", 40)]))).toEqual(["Join", "SetTimer"])
    expect(d.state.selfQuits).toBe(2)
  })

  it("a peer far ahead sends a snapshot: it is installed, then the decisions after it are asked for and joined", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    expect(d.tags(d.answer(1, [answer("r1", 5000, { snapshot: true })]))).toEqual(["Restore"])
    expect(d.state.phase).toEqual({ _tag: "Restoring", peer: "r1" })
    expect(d.step({ _tag: "Restored", nowMs: 50, instance: 4990 }).filter((o) => o._tag === "Ask")).toEqual([
      { _tag: "Ask", ask: d.state.asked, fromInstance: 4990 }
    ])
    const join = d.answer(60, [answer("r1", 5003)]).find((o) => o._tag === "Join")
    expect(join).toMatchObject({ joinInstance: 5003, snapshotAt: 4990 })
    // Applied 4990..5002 (replayed), then serving; past the join instance the snapshot is behind it.
    d.step({ _tag: "Applied", instance: 5002 })
    expect(d.state.serving).toBe(true)
    d.step({ _tag: "Applied", instance: 5003 })
    expect(d.state.restoredAt).toBeUndefined()
    // A self-quit right after a restore skips learning: the engine must be joined past the snapshot.
    const e = new Driver()
    e.step({ _tag: "Start", nowMs: 0 })
    e.answer(1, [answer("r1", 5000, { snapshot: true })])
    e.step({ _tag: "Restored", nowMs: 50, instance: 4990 })
    e.answer(60, [answer("r1", 5003)])
    expect(e.tags(e.step(crashed(70)))).toEqual(["Ask"])
  })

  it("watchdog: a join after which nothing is decided is tried again", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    d.answer(1, [answer("r1", 10, { rejoining: true }), answer("r2", 10, { rejoining: true })])
    expect(d.out.find((o) => o._tag === "Join")).toMatchObject({ startNow: false })
    expect(d.out.find((o) => o._tag === "SetTimer")).toMatchObject({ afterMs: watchdogMs(params) })
    d.step({ _tag: "Applied", instance: 9 })
    const again = d.fire(2_500)
    expect(d.tags(again)).toEqual(["Ask"])
    expect(again.some((o) => o._tag === "Log" && o.message.includes("joining again"))).toBe(true)
  })

  it("a self-quit before the join is caught up to delays serving until a later join is", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    d.answer(1, [answer("r1", 100)])
    d.step(crashed(2))
    d.step({ _tag: "Applied", instance: 99 })
    expect(d.state.serving).toBe(false)
    d.fire(200)
    d.answer(210, [answer("r1", 104)])
    d.step({ _tag: "Applied", instance: 103 })
    expect(d.state.serving).toBe(true)
  })

  it("answers to an older ask and stale timers change nothing", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    d.answer(1, [answer("r1", 1)])
    d.fire(120)
    const before = d.state
    expect(d.step({ _tag: "Answers", ask: d.state.asked - 1, nowMs: 130, answers: [answer("r1", 9)] })).toEqual([])
    expect(d.step({ _tag: "Timer", nowMs: 140, id: d.state.timer - 1 })).toEqual([])
    expect(d.state).toBe(before)
  })

  it("a new member waits, asking again, until a membership change adds it", () => {
    const d = new Driver({ ...params, self: "r4", members: ["r1", "r2", "r3", "r4", "r5"] })
    d.step({ _tag: "Start", nowMs: 0 })
    // The group runs without r4: joining it would be refused by the engine.
    const notYet = [answer("r1", 7, { member: false }), answer("r2", 7, { member: false })]
    d.answer(1, notYet)
    d.fire(200)
    for (let i = 0; i < 30; i++) {
      expect(d.tags(d.answer(300 + i, notYet))).toEqual(["SetTimer"])
      d.fire(400 + i)
    }
    expect(d.out.some((o) => o._tag === "Log" && o.message.includes("not a member of the group yet"))).toBe(true)
    expect(d.tags(d.answer(1000, [answer("r1", 12)]))).toContain("Join")
  })

  it("a failed restore or join is retried; a closed core does nothing", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    d.answer(1, [answer("r1", 500, { snapshot: true })])
    expect(d.tags(d.step({ _tag: "RestoreFailed", nowMs: 5, reason: "chunk 2 expired" }))).toEqual(["SetTimer"])
    expect(d.tags(d.fire(300))).toEqual(["Ask"])
    d.answer(301, [answer("r1", 510)])
    expect(d.tags(d.step({ _tag: "JoinFailed", nowMs: 302, reason: "engine stopped" }))).toEqual(["SetTimer"])
    d.step({ _tag: "Close" })
    expect(d.fire(600)).toEqual([])
    expect(d.step(crashed(601))).toEqual([])
  })

  it("a fetched snapshot is installed only while awaited and ahead of what is applied", () => {
    const d = new Driver()
    d.step({ _tag: "Start", nowMs: 0 })
    d.answer(3, [answer("r1", 500, { snapshot: true }), answer("r2", 480)])
    expect(d.state.phase._tag).toBe("Restoring")
    expect(mayInstallSnapshot(d.state, 500)).toBe(true)
    // The engine caught up as a learner meanwhile and the host applied past the snapshot: keep what it has.
    d.step({ _tag: "Applied", instance: 500 })
    expect(mayInstallSnapshot(d.state, 500)).toBe(false)
    d.step({ _tag: "EngineRejoined", nowMs: 5, instance: 501 })
    expect(mayInstallSnapshot(d.state, 600)).toBe(false)
  })
})
