/** Back-to-back instances ("ckcucmi", App. B.1) against the paper's sentences, driven in lockstep. */
import { describe, expect, it } from "vitest"
import { initialSchedule, type MembershipSchedule } from "./membership.js"
import {
  createMulti,
  type MultiInput,
  type MultiOutput,
  type MultiState,
  type ProposalSource,
  stepMulti
} from "./popuc-multi.js"
import { makeRoundTimerConfig } from "./round-timer.js"
import type { ProcessId, RoundMsg, Value } from "./types.js"
import { clientValue, heartbeatValue, membershipValue, valueKey, valueRef } from "./value.js"

/** Every process of these tests is in its first (and only) incarnation. */
const TEST_INCARNATION = "0000000000000001"

const timer = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1 })
const ids = (n: number): ReadonlyArray<ProcessId> => [...Array(n).keys()].map((i) => `p${i}`)
const beat =
  (self: ProcessId): ProposalSource =>
  (instance) => [heartbeatValue(self, TEST_INCARNATION, instance)]

const multi = (self: ProcessId, schedule: MembershipSchedule, startInstance = 1): MultiState =>
  createMulti({
    self,
    roundTimer: timer,
    startInstance,
    schedule,
    proposal: [heartbeatValue(self, TEST_INCARNATION, startInstance)]
  })

const msg = (
  instance: number,
  round: number,
  values: ReadonlyArray<Value>,
  locked: ReadonlyArray<ProcessId> = []
): RoundMsg => ({
  _tag: "Round",
  instance,
  round,
  values,
  locked,
  decided: []
})

const tagged = <T extends MultiOutput["_tag"]>(out: ReadonlyArray<MultiOutput>, tag: T) =>
  out.filter((o): o is Extract<MultiOutput, { _tag: T }> => o._tag === tag)

class Lockstep {
  readonly states = new Map<ProcessId, MultiState>()
  readonly outputs = new Map<ProcessId, Array<MultiOutput>>()
  private inFlight: Array<{ from: ProcessId; to: ProcessId; msg: RoundMsg }> = []

  constructor(
    members: ReadonlyArray<ProcessId>,
    schedule: MembershipSchedule = initialSchedule(members),
    readonly propose: (self: ProcessId) => ProposalSource = beat
  ) {
    for (const p of members) {
      this.states.set(p, multi(p, schedule))
      this.outputs.set(p, [])
    }
  }

  apply(p: ProcessId, input: MultiInput): ReadonlyArray<MultiOutput> {
    const r = stepMulti(this.states.get(p)!, input, this.propose(p))
    this.states.set(p, r.state)
    this.outputs.get(p)!.push(...r.out)
    for (const o of r.out) if (o._tag === "Send") for (const to of o.to) this.inFlight.push({ from: p, to, msg: o.msg })
    return r.out
  }

  start(): this {
    for (const p of this.states.keys()) this.apply(p, { _tag: "Start" })
    return this
  }

  round(): this {
    const delivering = this.inFlight
    this.inFlight = []
    for (const e of delivering)
      if (this.states.has(e.to)) this.apply(e.to, { _tag: "Receive", from: e.from, msg: e.msg })
    for (const [p, s] of this.states)
      this.apply(p, { _tag: "RoundTimeout", instance: s.current.instance, round: s.current.round })
    return this
  }
}

describe("POPUC back-to-back instances (ckcucmi)", () => {
  it("In failure-free executions, all processes execute a series of consensus instances, each of which take exactly 2 rounds", () => {
    const run = new Lockstep(ids(3)).start()
    for (let i = 0; i < 8; i++) run.round()
    for (const [, out] of run.outputs) {
      const decisions = tagged(out, "Decide")
      expect(decisions.map((d) => d.instance)).toEqual([1, 2, 3, 4])
      expect(decisions.every((d) => d.round === 2)).toBe(true)
      // Deciding c opens c+1 in the same step: the round timer chain is never broken.
      expect(tagged(out, "Started").map((s) => s.instance)).toEqual([1, 2, 3, 4, 5])
    }
  })

  it("Processes ... ignore messages from prior instances", () => {
    const run = new Lockstep(ids(3)).start().round().round()
    const p0 = run.states.get("p0")!
    expect(p0.current.instance).toBe(2)
    const old = stepMulti(p0, { _tag: "Receive", from: "p1", msg: msg(1, 2, [], ["p1"]) }, beat("p0"))
    expect(old.out).toEqual([])
    expect(old.state.ignoredOld).toBe(1)
  })

  it("[Processes] declare themselves faulty through crash when they notice they are a number of instances 'behind'", () => {
    const s = multi("p0", initialSchedule(ids(3)))
    const behind = stepMulti(s, { _tag: "Receive", from: "p1", msg: msg(3, 1, []) }, beat("p0"))
    expect(behind.state.status).toBe("crashed")
    expect(behind.out).toEqual([{ _tag: "Crash", instance: 1, reason: expect.stringMatching(/behind/) }])
  })

  it("a round-1 message of the next instance closes the current round at once when that close decides, then is merged", () => {
    // p0 is in round 2 of instance 1 and has everyone's round-2 message; p1's timer fired first.
    let s = new Lockstep(ids(3)).start().round().states.get("p0")!
    for (const q of ["p1", "p2"])
      s = stepMulti(
        s,
        { _tag: "Receive", from: q, msg: msg(1, 2, [heartbeatValue(q, TEST_INCARNATION, 1)], [q]) },
        beat("p0")
      ).state
    const next = msg(2, 1, [heartbeatValue("p1", TEST_INCARNATION, 2)])
    const caught = stepMulti(s, { _tag: "Receive", from: "p1", msg: next }, beat("p0"))
    expect(tagged(caught.out, "Decide")).toEqual([expect.objectContaining({ instance: 1, round: 2 })])
    expect(tagged(caught.out, "Started")).toEqual([
      { _tag: "Started", instance: 2, attempt: 0, members: ["p0", "p1", "p2"] }
    ])
    expect(caught.state.current.values.has(valueKey(heartbeatValue("p1", TEST_INCARNATION, 2)))).toBe(true)
    // A catch-up shortens the next round (§6.2).
    expect(tagged(caught.out, "SetTimer")[0]?.afterMs).toBeCloseTo(3.0)
  })

  it("a round-1 message of the next instance does not cut a round short when closing it would not decide: it waits, stashed", () => {
    const s = stepMulti(multi("p0", initialSchedule(ids(3))), { _tag: "Start" }, beat("p0")).state
    const early = stepMulti(
      s,
      { _tag: "Receive", from: "p1", msg: msg(2, 1, [heartbeatValue("p1", TEST_INCARNATION, 2)]) },
      beat("p0")
    )
    expect(early.out).toEqual([])
    expect(early.state.current.round).toBe(1)
    expect(early.state.stash).toHaveLength(1)
    const tooEarly = stepMulti(early.state, { _tag: "Receive", from: "p2", msg: msg(2, 2, []) }, beat("p0"))
    expect(tooEarly.state.stash).toHaveLength(1)
    expect(tooEarly.state.current.dropped).toBe(1)
  })

  it("stashed next-instance messages are merged once the next instance starts", () => {
    let s = stepMulti(multi("p0", initialSchedule(ids(5))), { _tag: "Start" }, beat("p0")).state
    for (const q of ["p1", "p2", "p3", "p4"]) {
      s = stepMulti(
        s,
        { _tag: "Receive", from: q, msg: msg(1, 1, [heartbeatValue(q, TEST_INCARNATION, 1)]) },
        beat("p0")
      ).state
    }
    s = stepMulti(s, { _tag: "RoundTimeout", instance: 1, round: 1 }, beat("p0")).state
    // p1 is already in instance 2; the other round-2 messages are still in flight, so p0 cannot decide yet.
    s = stepMulti(s, { _tag: "Receive", from: "p1", msg: msg(1, 2, [], ["p1"]) }, beat("p0")).state
    s = stepMulti(
      s,
      { _tag: "Receive", from: "p1", msg: msg(2, 1, [heartbeatValue("p1", TEST_INCARNATION, 2)]) },
      beat("p0")
    ).state
    expect(s.current.instance).toBe(1)
    for (const q of ["p2", "p3"])
      s = stepMulti(s, { _tag: "Receive", from: q, msg: msg(1, 2, [], [q]) }, beat("p0")).state
    const decided = stepMulti(s, { _tag: "RoundTimeout", instance: 1, round: 2 }, beat("p0"))
    expect(tagged(decided.out, "Decide")).toHaveLength(1)
    expect(decided.state.current.instance).toBe(2)
    expect(decided.state.current.roundLiveset.has("p1")).toBe(true)
    expect(decided.state.current.values.has(valueKey(heartbeatValue("p1", TEST_INCARNATION, 2)))).toBe(true)
  })

  it("decision relay: a replica one round behind decides the set its peer decided when it holds all its values", () => {
    // N = 5: p0 locked in round 1, but in round 2 it has heard only one more lock: closing now cannot decide.
    let s = stepMulti(multi("p0", initialSchedule(ids(5))), { _tag: "Start" }, beat("p0")).state
    for (const q of ["p1", "p2", "p3", "p4"]) {
      s = stepMulti(
        s,
        { _tag: "Receive", from: q, msg: msg(1, 1, [heartbeatValue(q, TEST_INCARNATION, 1)]) },
        beat("p0")
      ).state
    }
    s = stepMulti(s, { _tag: "RoundTimeout", instance: 1, round: 1 }, beat("p0")).state
    s = stepMulti(s, { _tag: "Receive", from: "p1", msg: msg(1, 2, [], ["p1"]) }, beat("p0")).state
    const decision = ids(5).map((p) => heartbeatValue(p, TEST_INCARNATION, 1))
    const refs = decision.map(valueRef)
    const relayed = stepMulti(s, { _tag: "Receive", from: "p2", msg: { ...msg(2, 1, []), decided: refs } }, beat("p0"))
    expect(tagged(relayed.out, "Decide")).toEqual([
      { _tag: "Decide", instance: 1, round: 2, values: decision, suspects: [] }
    ])
    expect(relayed.state.current.instance).toBe(2)
    // Without every value of the decision, nothing is decided: the relay never guesses.
    const unknown = [...refs, { proposer: "p9", incarnation: TEST_INCARNATION, seq: 1, kind: "client" as const }]
    const waits = stepMulti(s, { _tag: "Receive", from: "p2", msg: { ...msg(2, 1, []), decided: unknown } }, beat("p0"))
    expect(waits.out).toEqual([])
  })

  it("the round-1 message of an instance opened by a decision carries the ids of that decision", () => {
    const run = new Lockstep(ids(3)).start().round().round()
    const sends = tagged(run.outputs.get("p0")!, "Send")
    expect(sends[0]?.msg).toMatchObject({ instance: 1, round: 1, decided: [] })
    const firstOfTwo = sends.find((o) => o.msg.instance === 2 && o.msg.round === 1)
    expect(firstOfTwo?.msg.decided).toEqual(
      ids(3).map((p) => ({ proposer: p, incarnation: TEST_INCARNATION, seq: 1, kind: "heartbeat" }))
    )
    expect(sends.find((o) => o.msg.instance === 1 && o.msg.round === 2)?.msg.decided).toEqual([])
  })

  it("name can be set so that a process that self-quits is not excluded from future instances: it rejoins at an agreed instance", () => {
    const joiner = multi("p2", initialSchedule(ids(3)), 7)
    expect(joiner.current.round).toBe(0)
    // Waiting in round 0: no timer, no message, until the group opens instance 7.
    const wrong = stepMulti(joiner, { _tag: "Receive", from: "p0", msg: msg(7, 2, []) }, beat("p2"))
    expect(wrong.out).toEqual([])
    const joined = stepMulti(
      joiner,
      { _tag: "Receive", from: "p0", msg: msg(7, 1, [heartbeatValue("p0", TEST_INCARNATION, 7)]) },
      beat("p2")
    )
    expect(tagged(joined.out, "Started")).toEqual([
      { _tag: "Started", instance: 7, attempt: 0, members: ["p0", "p1", "p2"] }
    ])
    expect(tagged(joined.out, "Send")[0]?.msg).toMatchObject({
      instance: 7,
      round: 1,
      values: [heartbeatValue("p2", TEST_INCARNATION, 7)]
    })
    // Missed the start of its instance entirely: the group is two instances ahead, so it must rejoin again.
    const missed = stepMulti(joiner, { _tag: "Receive", from: "p0", msg: msg(9, 1, []) }, beat("p2"))
    expect(missed.state.status).toBe("crashed")
  })

  describe("attempts (a collapsed group opens an instance again)", () => {
    const beat7 = (p: ProcessId) => [heartbeatValue(p, TEST_INCARNATION, 7)]
    const at = (attempt: number, round: number, from: ProcessId = "p0"): RoundMsg => ({
      ...msg(7, round, beat7(from)),
      attempt
    })
    const started = (attempt: number) =>
      stepMulti(
        createMulti({
          self: "p2",
          roundTimer: timer,
          startInstance: 7,
          startAttempt: attempt,
          schedule: initialSchedule(ids(3)),
          proposal: beat7("p2")
        }),
        { _tag: "Start" },
        beat("p2")
      )

    it("round messages carry their attempt, and another attempt's are never merged", () => {
      const s = started(2)
      expect(tagged(s.out, "Send")[0]?.msg).toMatchObject({ instance: 7, attempt: 2, round: 1 })
      const older = stepMulti(s.state, { _tag: "Receive", from: "p0", msg: at(1, 1) }, beat("p2"))
      expect(older.out).toEqual([])
      expect(older.state.current.values.size).toBe(1)
      expect(older.state.ignoredOld).toBe(1)
      const same = stepMulti(s.state, { _tag: "Receive", from: "p0", msg: at(2, 1) }, beat("p2"))
      expect(same.state.current.values.size).toBe(2)
    })

    it("a higher attempt supersedes a started one (the process quits it), and is adopted before round 1", () => {
      const quit = stepMulti(started(1).state, { _tag: "Receive", from: "p0", msg: at(2, 1) }, beat("p2"))
      expect(quit.state.status).toBe("crashed")
      expect(tagged(quit.out, "Crash")[0]?.reason).toContain("attempt 2")
      const waiting = multi("p2", initialSchedule(ids(3)), 7)
      const adopted = stepMulti(waiting, { _tag: "Receive", from: "p0", msg: at(3, 1) }, beat("p2"))
      expect(tagged(adopted.out, "Started")).toEqual([
        { _tag: "Started", instance: 7, attempt: 3, members: ["p0", "p1", "p2"] }
      ])
      expect(tagged(adopted.out, "Send")[0]?.msg).toMatchObject({ attempt: 3, round: 1 })
      expect(adopted.state.current.values.size).toBe(2)
    })

    it("a relayed decision of another attempt is not adopted: it may be a dead process's lone decision", () => {
      let s = started(1).state
      s = stepMulti(s, { _tag: "Receive", from: "p0", msg: at(1, 1) }, beat("p2")).state
      const refs = [...s.current.values.values()].map(valueRef)
      const relay = (decidedAttempt: number): RoundMsg => ({ ...msg(8, 1, []), decided: refs, decidedAttempt })
      expect(tagged(stepMulti(s, { _tag: "Receive", from: "p1", msg: relay(0) }, beat("p2")).out, "Decide")).toEqual([])
      expect(
        tagged(stepMulti(s, { _tag: "Receive", from: "p1", msg: relay(1) }, beat("p2")).out, "Decide")
      ).toHaveLength(1)
    })

    it("the next instance opens in the highest attempt its peers already opened it in", () => {
      const run = new Lockstep(ids(3)).start().round()
      const p0 = run.states.get("p0")!
      expect(p0.current.instance).toBe(1)
      // p1 decided 1 (relayed) and opened 2 in attempt 4: p0 follows the relay and opens 2 there too.
      const decided = [...p0.current.values.values()].map(valueRef)
      const relay: RoundMsg = { ...msg(2, 1, []), attempt: 4, decided }
      const next = stepMulti(p0, { _tag: "Receive", from: "p1", msg: relay }, beat("p0"))
      expect(next.state.current).toMatchObject({ instance: 2, attempt: 4 })
      const opened = tagged(next.out, "Send").find((o) => o.msg.instance === 2)
      expect(opened?.msg).toMatchObject({ attempt: 4, decidedAttempt: 0 })
    })
  })

  it("a membership change decided in instance k takes effect at k+2 at every process; a removed process leaves", () => {
    const members = ids(3)
    const change = membershipValue("p0", TEST_INCARNATION, 0, ["p0", "p1", "p3"])
    let proposed = false
    const run = new Lockstep(members, initialSchedule(members), (self) => (instance, decided) => {
      if (self === "p0" && !proposed && instance === 2) {
        proposed = true
        return [change]
      }
      return beat(self)(instance, decided)
    }).start()
    for (let i = 0; i < 8; i++) run.round()
    for (const p of ["p0", "p1"]) {
      const started = tagged(run.outputs.get(p)!, "Started")
      expect(started.find((s) => s.instance === 3)?.members).toEqual(["p0", "p1", "p2"])
      expect(started.find((s) => s.instance === 4)?.members).toEqual(["p0", "p1", "p3"])
    }
    expect(tagged(run.outputs.get("p2")!, "Left")).toEqual([{ _tag: "Left", instance: 4 }])
    expect(run.states.get("p2")!.status).toBe("left")
  })

  it("messages from processes that are not members of the instance are ignored", () => {
    const s = stepMulti(multi("p0", initialSchedule(ids(3))), { _tag: "Start" }, beat("p0")).state
    const r = stepMulti(
      s,
      { _tag: "Receive", from: "p9", msg: msg(1, 1, [heartbeatValue("p9", TEST_INCARNATION, 1)]) },
      beat("p0")
    )
    expect(r.state.current.values.size).toBe(1)
    expect(stepMulti(s, { _tag: "Receive", from: "p9", msg: msg(2, 1, []) }, beat("p0")).state.stash).toEqual([])
  })

  it("requires a membership delay of at least 2 so next-instance senders can be checked", () => {
    expect(() =>
      createMulti({
        self: "p0",
        roundTimer: timer,
        startInstance: 1,
        schedule: initialSchedule(ids(3)),
        proposal: [],
        membershipDelay: 1
      })
    ).toThrow(/>= 2/)
  })
})

describe("host-turnaround gap between instances", () => {
  const gapTimer = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1, instanceGapMs: 0.5 })
  /** p0 of a group of 3 that received everyone's messages of instance 1 and has just decided it. */
  const decidedFirst = (propose: ProposalSource) => {
    let s = createMulti({
      self: "p0",
      roundTimer: gapTimer,
      startInstance: 1,
      schedule: initialSchedule(ids(3)),
      proposal: [heartbeatValue("p0", TEST_INCARNATION, 1)]
    })
    s = stepMulti(s, { _tag: "Start" }, propose).state
    for (const round of [1, 2]) {
      for (const q of ["p1", "p2"]) {
        const values = [
          heartbeatValue("p0", TEST_INCARNATION, 1),
          heartbeatValue("p1", TEST_INCARNATION, 1),
          heartbeatValue("p2", TEST_INCARNATION, 1)
        ]
        s = stepMulti(
          s,
          { _tag: "Receive", from: q, msg: msg(1, round, values, round === 2 ? [q] : []) },
          propose
        ).state
      }
      const closed = stepMulti(s, { _tag: "RoundTimeout", instance: 1, round }, propose)
      s = closed.state
      if (round === 2) return closed
    }
    throw new Error("unreachable")
  }

  it("a decision waits out the gap (a round-0 timer) before opening the next instance, and proposes what arrived meanwhile", () => {
    let pending: ReadonlyArray<Value> = []
    const propose: ProposalSource = (instance) =>
      pending.length > 0 ? pending : [heartbeatValue("p0", TEST_INCARNATION, instance)]
    const decided = decidedFirst(propose)
    expect(tagged(decided.out, "Decide")).toHaveLength(1)
    expect(tagged(decided.out, "Send")).toEqual([])
    expect(tagged(decided.out, "SetTimer")).toEqual([{ _tag: "SetTimer", instance: 2, round: 0, afterMs: 0.5 }])
    expect(decided.state.opening?.instance).toBe(2)
    // A client request reaches the host during the gap; the next instance proposes it.
    pending = [heartbeatValue("p0", TEST_INCARNATION, 99)]
    const opened = stepMulti(decided.state, { _tag: "RoundTimeout", instance: 2, round: 0 }, propose)
    expect(tagged(opened.out, "Started")).toEqual([
      { _tag: "Started", instance: 2, attempt: 0, members: ["p0", "p1", "p2"] }
    ])
    const [send] = tagged(opened.out, "Send")
    expect(send?.msg.values).toEqual(pending)
    // Round 1 relays the decision of instance 1, as without a gap.
    expect(send?.msg.decided).toHaveLength(3)
    expect(tagged(opened.out, "SetTimer")[0]?.afterMs).toBeCloseTo(3.1)
  })

  it("a peer's round-1 message during the gap opens the next instance at once (catch-up) and is merged", () => {
    const decided = decidedFirst(beat("p0"))
    const early = msg(2, 1, [heartbeatValue("p1", TEST_INCARNATION, 2)])
    const caught = stepMulti(decided.state, { _tag: "Receive", from: "p1", msg: early }, beat("p0"))
    expect(tagged(caught.out, "Started").map((s) => s.instance)).toEqual([2])
    expect(caught.state.opening).toBeUndefined()
    expect(caught.state.current.values.has(valueKey(heartbeatValue("p1", TEST_INCARNATION, 2)))).toBe(true)
    expect(tagged(caught.out, "SetTimer")[0]?.afterMs).toBeCloseTo(3.0)
    // The gap's own timer then does nothing.
    const late = stepMulti(caught.state, { _tag: "RoundTimeout", instance: 2, round: 0 }, beat("p0"))
    expect(late.out).toEqual([])
  })

  it("during the gap, a message of the instance after next means this process is behind: it crashes", () => {
    const decided = decidedFirst(beat("p0"))
    const r = stepMulti(decided.state, { _tag: "Receive", from: "p1", msg: msg(3, 1, []) }, beat("p0"))
    expect(r.state.status).toBe("crashed")
    expect(tagged(r.out, "Crash")[0]?.reason).toMatch(/behind/)
  })
})

describe("idle gap with rounds closed on all heard", () => {
  const earlyTimer = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1, instanceGapMs: 3, closeOnAllHeard: true })
  const client = clientValue("p0", TEST_INCARNATION, 7, new Uint8Array([1]))
  /** p0 of a group of 3, after every message of instance 1 arrived (its rounds close on all heard). */
  const decideFirst = (propose: ProposalSource) => {
    let s = createMulti({
      self: "p0",
      roundTimer: earlyTimer,
      startInstance: 1,
      schedule: initialSchedule(ids(3)),
      proposal: [heartbeatValue("p0", TEST_INCARNATION, 1)]
    })
    const started = stepMulti(s, { _tag: "Start" }, propose)
    const out: Array<MultiOutput> = [...started.out]
    s = started.state
    const values = [
      heartbeatValue("p0", TEST_INCARNATION, 1),
      heartbeatValue("p1", TEST_INCARNATION, 1),
      heartbeatValue("p2", TEST_INCARNATION, 1)
    ]
    for (const round of [1, 2]) {
      for (const q of ["p1", "p2"]) {
        const r = stepMulti(
          s,
          { _tag: "Receive", from: q, msg: msg(1, round, values, round === 2 ? [q] : []) },
          propose
        )
        s = r.state
        out.push(...r.out)
      }
    }
    return { state: s, out }
  }

  it("an idle process waits out the gap; its host's broadcast (Open) ends the wait", () => {
    let pending: ReadonlyArray<Value> = []
    const propose: ProposalSource = (instance) =>
      pending.length > 0 ? pending : [heartbeatValue("p0", TEST_INCARNATION, instance)]
    const decided = decideFirst(propose)
    expect(tagged(decided.out, "Decide")).toHaveLength(1)
    expect(decided.state.opening?.instance).toBe(2)
    expect(tagged(decided.out, "SetTimer").at(-1)).toEqual({ _tag: "SetTimer", instance: 2, round: 0, afterMs: 3 })
    pending = [client]
    const opened = stepMulti(decided.state, { _tag: "Open" }, propose)
    expect(tagged(opened.out, "Started").map((s) => s.instance)).toEqual([2])
    expect(tagged(opened.out, "Send")[0]?.msg.values).toEqual([client])
  })

  it("a process with something to propose opens the next instance at once", () => {
    const propose: ProposalSource = () => [client]
    const decided = decideFirst(propose)
    expect(decided.state.opening).toBeUndefined()
    expect(decided.state.current.instance).toBe(2)
    expect(tagged(decided.out, "Started").map((s) => s.instance)).toEqual([1, 2])
  })

  it("Open outside a gap, or with timed rounds, changes nothing", () => {
    const decided = decideFirst(() => [client])
    expect(stepMulti(decided.state, { _tag: "Open" }, () => [client]).out).toEqual([])
    const timed = multi("p0", initialSchedule(ids(3)))
    expect(stepMulti(timed, { _tag: "Open" }, beat("p0")).out).toEqual([])
  })

  it("a peer reported gone is not waited for in later instances either, until it is heard from", () => {
    const idle: ProposalSource = (instance) => [heartbeatValue("p0", TEST_INCARNATION, instance)]
    const decided = decideFirst(idle)
    // Reported during the gap: the decided instance keeps the report for the next one.
    const reported = stepMulti(decided.state, { _tag: "Gone", process: "p2" }, idle)
    expect(reported.out).toEqual([])
    const opened = stepMulti(reported.state, { _tag: "Open" }, () => [client])
    expect(opened.state.current.instance).toBe(2)
    expect([...opened.state.current.gone]).toEqual(["p2"])
    // p1's round-1 message is all instance 2's round 1 waits for.
    const closed = stepMulti(
      opened.state,
      { _tag: "Receive", from: "p1", msg: msg(2, 1, [heartbeatValue("p1", TEST_INCARNATION, 2)]) },
      idle
    )
    expect(closed.state.current.round).toBe(2)
    expect([...closed.state.current.suspect]).toEqual(["p2"])
  })
})
