/**
 * POPUC, one instance, against the sentences of the paper (§4.2, App. A) it implements. Each test quotes
 * the sentence it checks (etcd raft_paper_test style). Runs are driven in lockstep: every message sent for
 * round r is delivered (unless a test drops it) before every process's round-r timer fires.
 */
import { describe, expect, it } from "vitest"
import {
  closeRound,
  createInstance,
  type InstanceInput,
  type InstanceOutput,
  type InstanceState,
  stepInstance,
  unheardPeers
} from "./popuc-instance.js"
import { makeRoundTimerConfig, roundPeriodMs } from "./round-timer.js"
import type { ProcessId, RoundMsg, Value } from "./types.js"
import { clientValue, valueKey } from "./value.js"

/** Every process of these tests is in its first (and only) incarnation. */
const TEST_INCARNATION = "0000000000000001"
/** A value as `proposer#seq`: every value of these tests has the same incarnation. */
const shortKey = (v: { readonly proposer: string; readonly seq: number }) => `${v.proposer}#${v.seq}`

const timer = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1 })
const ids = (n: number): ReadonlyArray<ProcessId> => [...Array(n).keys()].map((i) => `p${i}`)
const proposalOf = (p: ProcessId): Value => clientValue(p, TEST_INCARNATION, 0, new Uint8Array([p.charCodeAt(1)]))

const create = (self: ProcessId, members: ReadonlyArray<ProcessId>): InstanceState =>
  createInstance({ instance: 1, self, members, proposal: [proposalOf(self)], roundTimer: timer })

const msg = (round: number, values: ReadonlyArray<Value>, locked: ReadonlyArray<ProcessId> = []): RoundMsg => ({
  _tag: "Round",
  instance: 1,
  round,
  values,
  locked,
  decided: []
})

interface Envelope {
  readonly from: ProcessId
  readonly to: ProcessId
  readonly msg: RoundMsg
}

/** Lockstep driver: a process crashes by no longer stepping; `drop` models omissions and partial sends. */
class Lockstep {
  readonly states = new Map<ProcessId, InstanceState>()
  readonly outputs = new Map<ProcessId, Array<InstanceOutput>>()
  private inFlight: Array<Envelope> = []
  readonly stopped = new Set<ProcessId>()

  constructor(
    readonly members: ReadonlyArray<ProcessId>,
    private readonly drop: (e: Envelope) => boolean = () => false
  ) {
    for (const p of members) {
      this.states.set(p, create(p, members))
      this.outputs.set(p, [])
    }
  }

  private apply(p: ProcessId, input: InstanceInput): void {
    if (this.stopped.has(p)) return
    const r = stepInstance(this.states.get(p)!, input)
    this.states.set(p, r.state)
    this.outputs.get(p)!.push(...r.out)
    for (const o of r.out) {
      if (o._tag === "Send") for (const to of o.to) this.inFlight.push({ from: p, to, msg: o.msg })
    }
  }

  start(): this {
    for (const p of this.members) this.apply(p, { _tag: "Start" })
    return this
  }

  /** Delivers everything in flight, then fires every process's timer for its current round. */
  round(): this {
    const delivering = this.inFlight
    this.inFlight = []
    for (const e of delivering) if (!this.drop(e)) this.apply(e.to, { _tag: "Receive", from: e.from, msg: e.msg })
    for (const p of this.members) this.apply(p, { _tag: "RoundTimeout", round: this.states.get(p)!.round })
    return this
  }

  decision(p: ProcessId): Extract<InstanceOutput, { _tag: "Decide" }> | undefined {
    return this.outputs.get(p)!.find((o) => o._tag === "Decide") as Extract<InstanceOutput, { _tag: "Decide" }>
  }

  crashed(p: ProcessId): boolean {
    return this.outputs.get(p)!.some((o) => o._tag === "Crash")
  }
}

describe("POPUC instance (Alg. 2)", () => {
  it("Most of the time no failures occur and the decision takes two rounds: round 1 for locking, round 2 for locked majority", () => {
    const run = new Lockstep(ids(5)).start().round()
    for (const p of run.members) {
      expect(run.states.get(p)!.locked.has(p)).toBe(true)
      expect(run.decision(p)).toBeUndefined()
    }
    run.round()
    const all = run.members.map((p) => shortKey(proposalOf(p)))
    for (const p of run.members) {
      // "after two rounds, output an ordered array of all proposed values as the consensus decision"
      expect(run.decision(p)?.round).toBe(2)
      expect(run.decision(p)?.values.map(shortKey)).toEqual(all)
    }
  })

  it("In every round a process p_i multi-sends its set V_i of proposed values it has seen so far", () => {
    const s = create("p0", ids(3))
    const started = stepInstance(s, { _tag: "Start" })
    const send = started.out.find((o) => o._tag === "Send")
    expect(send).toMatchObject({ to: ["p1", "p2"], msg: { round: 1, locked: [] } })
    const merged = stepInstance(started.state, { _tag: "Receive", from: "p1", msg: msg(1, [proposalOf("p1")]) })
    const round2 = stepInstance(merged.state, { _tag: "RoundTimeout", round: 1 })
    const next = round2.out.find((o) => o._tag === "Send")
    expect(next?._tag === "Send" && next.msg.values.map(shortKey).sort()).toEqual(["p0#0", "p1#0"])
  })

  it("The timer calls timeout every time interval of duration ΔI + ΔW + ΔD", () => {
    const started = stepInstance(create("p0", ids(3)), { _tag: "Start" })
    expect(started.out).toContainEqual({ _tag: "SetTimer", instance: 1, round: 1, afterMs: roundPeriodMs(timer) })
  })

  it("if p_i suspects more than t processes, it learns that it does not belong to a correct quorum and quits execution", () => {
    const alone = stepInstance(create("p0", ids(5)), { _tag: "Start" }).state
    const closed = stepInstance(alone, { _tag: "RoundTimeout", round: 1 })
    expect(closed.state.status).toBe("crashed")
    expect(closed.out).toEqual([expect.objectContaining({ _tag: "Crash", round: 1 })])
  })

  it("In case p_i receives a message from a process in the next round, it immediately starts the next one", () => {
    let s = stepInstance(create("p0", ids(3)), { _tag: "Start" }).state
    s = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(1, [proposalOf("p1")]) }).state
    s = stepInstance(s, { _tag: "Receive", from: "p2", msg: msg(1, [proposalOf("p2")]) }).state
    const caught = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(2, [proposalOf("p1")], ["p1"]) })
    expect(caught.state.round).toBe(2)
    // "so that the receive routine always follow the send routine of the same round": p0 sent its round 2
    // message, then merged p1's.
    expect(caught.out.find((o) => o._tag === "Send")).toMatchObject({ msg: { round: 2, locked: ["p0"] } })
    expect([...caught.state.locked].sort()).toEqual(["p0", "p1"])
    // §6.2: "not only anticipating the next round but also slightly reducing the round duration".
    expect(caught.out).toContainEqual({
      _tag: "SetTimer",
      instance: 1,
      round: 2,
      afterMs: roundPeriodMs(timer) - timer.catchUpShortenMs
    })
  })

  it("a catch-up that would make it quit waits for the round's timer instead, holding the message (a stall)", () => {
    // p0 heard nobody in round 1 yet (the whole machine stalled): p1's round 2 arrives first.
    const s = stepInstance(create("p0", ids(3)), { _tag: "Start" }).state
    const held = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(2, [proposalOf("p1")], ["p1"]) })
    expect(held.state.status).toBe("running")
    expect(held.state.round).toBe(1)
    expect(held.out).toEqual([])
    // The round-1 messages still on their way arrive; the timer closes round 1 and replays what it held.
    let t = stepInstance(held.state, { _tag: "Receive", from: "p1", msg: msg(1, [proposalOf("p1")]) }).state
    t = stepInstance(t, { _tag: "Receive", from: "p2", msg: msg(1, [proposalOf("p2")]) }).state
    const closed = stepInstance(t, { _tag: "RoundTimeout", round: 1 })
    expect(closed.state.round).toBe(2)
    expect(closed.state.suspect.size).toBe(0)
    expect([...closed.state.locked].sort()).toEqual(["p0", "p1"])
    // Nothing else came: at the timer it quits, as it would have.
    const quits = stepInstance(held.state, { _tag: "RoundTimeout", round: 1 })
    expect(quits.state.status).toBe("crashed")
  })

  it("p_i can only receive messages from processes which are at most one round ahead of it", () => {
    const s = stepInstance(create("p0", ids(3)), { _tag: "Start" }).state
    const early = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(3, [proposalOf("p1")]) })
    expect(early.state.round).toBe(1)
    expect(early.state.values.size).toBe(1)
    expect(early.state.dropped).toBe(1)
  })

  it("Processes also explicitly discard late messages from slow peers to avoid polluting their V and locked sets", () => {
    let s = stepInstance(create("p0", ids(3)), { _tag: "Start" }).state
    s = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(1, []) }).state
    s = stepInstance(s, { _tag: "Receive", from: "p2", msg: msg(1, []) }).state
    s = stepInstance(s, { _tag: "RoundTimeout", round: 1 }).state
    const late = stepInstance(s, { _tag: "Receive", from: "p2", msg: msg(1, [proposalOf("p2")], ["p2"]) })
    expect(late.state.values.has(valueKey(proposalOf("p2")))).toBe(false)
    expect(late.state.locked.has("p2")).toBe(false)
    expect(late.state.dropped).toBe(1)
  })

  it("suspect_i tracks possibly failed senders; these are permanently excluded from send and receive operations", () => {
    // p4 is silent in round 1: everyone suspects it and it never rejoins the instance.
    const run = new Lockstep(ids(5), (e) => e.from === "p4" || e.to === "p4").start().round()
    const p0 = run.states.get("p0")!
    expect([...p0.suspect]).toEqual(["p4"])
    const sent = run.outputs
      .get("p0")!
      .filter((o) => o._tag === "Send")
      .at(-1)
    expect(sent?._tag === "Send" && sent.to).toEqual(["p1", "p2", "p3"])
    const fromSuspect = stepInstance(p0, { _tag: "Receive", from: "p4", msg: msg(2, [proposalOf("p4")]) })
    expect(fromSuspect.state.values.has(valueKey(proposalOf("p4")))).toBe(false)
    expect(fromSuspect.state.roundLiveset.has("p4")).toBe(false)
  })

  it("The exception on locked_i: a suspected process that is known to be locked is still heard (Observation A.2)", () => {
    let s = stepInstance(create("p0", ids(3)), { _tag: "Start" }).state
    s = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(1, []) }).state
    s = stepInstance(s, { _tag: "RoundTimeout", round: 1 }).state // p2 suspected
    s = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(2, [], ["p1", "p2"]) }).state
    expect(s.locked.has("p2")).toBe(true)
    const heard = stepInstance(s, { _tag: "Receive", from: "p2", msg: msg(2, [proposalOf("p2")], ["p2"]) })
    expect(heard.state.values.has(valueKey(proposalOf("p2")))).toBe(true)
  })

  it("p_i can also become locked if it receives a message (with V_j) from another process p_j that is already locked", () => {
    // Two silent processes: 1 > |suspect| = 2 fails, so only the relayed lock makes p0 locked.
    let s = stepInstance(create("p0", ids(5)), { _tag: "Start" }).state
    for (const q of ["p1", "p2"]) s = stepInstance(s, { _tag: "Receive", from: q, msg: msg(1, []) }).state
    s = stepInstance(s, { _tag: "RoundTimeout", round: 1 }).state
    expect(s.locked.size).toBe(0)
    s = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(2, [], ["p1"]) }).state
    s = stepInstance(s, { _tag: "Receive", from: "p2", msg: msg(2, []) }).state
    s = stepInstance(s, { _tag: "RoundTimeout", round: 2 }).state
    expect([...s.locked].sort()).toEqual(["p0", "p1"])
  })

  it("[the early decision] is reached only when p_i ∈ locked_i already (Lemma A.6): a process that locks at r decides at r+1 at the earliest", () => {
    // t = 3. p0 suspected p6 in round 1 (not locked: 1 > 1 fails); in round 2 it hears three locked processes.
    const members = ids(7)
    let s = stepInstance(create("p0", members), { _tag: "Start" }).state
    for (const q of ["p1", "p2", "p3", "p4", "p5"])
      s = stepInstance(s, { _tag: "Receive", from: q, msg: msg(1, []) }).state
    s = stepInstance(s, { _tag: "RoundTimeout", round: 1 }).state
    expect(s.locked.has("p0")).toBe(false)
    for (const q of ["p1", "p2", "p3"]) s = stepInstance(s, { _tag: "Receive", from: q, msg: msg(2, [], [q]) }).state
    for (const q of ["p4", "p5"]) s = stepInstance(s, { _tag: "Receive", from: q, msg: msg(2, []) }).state
    const round2 = stepInstance(s, { _tag: "RoundTimeout", round: 2 })
    expect(round2.state.locked.size).toBe(4) // > t, but p0 locked only now
    expect(round2.out.some((o) => o._tag === "Decide")).toBe(false)
    expect(round2.state.round).toBe(3)
    // Its round 3 message tells everyone it is locked, so nobody will suspect it once it decides and stops.
    expect(round2.out.find((o) => o._tag === "Send")).toMatchObject({ msg: { locked: ["p0", "p1", "p2", "p3"] } })
  })

  it("Processes also decide if they reach round t+1", () => {
    // t = 1: a process that suspects one process and hears no lock still decides when it closes round 2.
    const run = new Lockstep(ids(3), (e) => e.from === "p2" || e.to === "p2").start()
    run.stopped.add("p2")
    run.round().round()
    expect(run.decision("p0")?.round).toBe(2)
    expect(run.decision("p1")?.values.map(shortKey)).toEqual(["p0#0", "p1#0"])
  })

  it("in the worst-case f=t with a different process failing at every round, processes in Q still decide in t+1 rounds", () => {
    // N = 5, t = 2: p4 crashes in round 1 after reaching only p3; p3 crashes in round 2 after reaching only p2.
    const run = new Lockstep(ids(5), (e) => {
      if (e.from === "p4") return e.msg.round !== 1 || e.to !== "p3"
      if (e.from === "p3") return e.msg.round === 2 ? e.to !== "p2" : e.msg.round > 2
      return e.to === "p4" || (e.to === "p3" && e.msg.round > 1)
    }).start()
    run.round()
    run.stopped.add("p4")
    run.round()
    run.stopped.add("p3")
    run.round()
    const decisions = ["p0", "p1", "p2"].map((p) => run.decision(p))
    for (const d of decisions) expect(d?.round).toBeLessThanOrEqual(3)
    // Uniform agreement: p4's value reached p2 through p3, and every correct process decides it.
    expect(new Set(decisions.map((d) => d?.values.map(shortKey).join()))).toEqual(new Set(["p0#0,p1#0,p2#0,p3#0,p4#0"]))
  })

  it("A timer armed for an earlier round is ignored after a catch-up", () => {
    let s = stepInstance(create("p0", ids(3)), { _tag: "Start" }).state
    s = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(1, []) }).state
    s = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(2, [], ["p1"]) }).state
    expect(s.round).toBe(2)
    const stale = stepInstance(s, { _tag: "RoundTimeout", round: 1 })
    expect(stale.state).toBe(s)
    expect(stale.out).toEqual([])
  })

  it("A process may lag behind, e.g., receive a message before even starting", () => {
    const s = create("p0", ids(3))
    const r = stepInstance(s, { _tag: "Receive", from: "p1", msg: msg(1, [proposalOf("p1")]) })
    expect(r.state.round).toBe(1)
    expect(r.out.find((o) => o._tag === "Send")).toMatchObject({ msg: { round: 1, values: [proposalOf("p0")] } })
    expect(r.state.values.size).toBe(2)
  })

  it("closeRound is the round change routine shared by timeout and catch-up", () => {
    const s = stepInstance(create("p0", ids(1)), { _tag: "Start" }).state
    // N = 1, t = 0: "if r_i > t then decide".
    expect(closeRound(s, "timeout").out).toEqual([expect.objectContaining({ _tag: "Decide", round: 1 })])
  })

  it("rejects member lists that are not N = 2t+1 distinct ids containing self", () => {
    expect(() => create("p0", ids(4))).toThrow(/2t\+1/)
    expect(() => create("p9", ids(3))).toThrow(/not a member/)
    expect(() => create("p0", ["p0", "p1", "p1"])).toThrow(/duplicate/)
  })
})

describe("rounds closed on all heard (RoundTimerConfig.closeOnAllHeard)", () => {
  const early = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1, closeOnAllHeard: true })
  const members = ids(3)
  const start = (self: ProcessId): InstanceState => {
    const s = createInstance({ instance: 1, self, members, proposal: [proposalOf(self)], roundTimer: early })
    return stepInstance(s, { _tag: "Start" }).state
  }
  const receive = (s: InstanceState, from: ProcessId, m: RoundMsg) => stepInstance(s, { _tag: "Receive", from, msg: m })

  it("closes a round as soon as every member not suspected was heard from, without its timer", () => {
    let p0 = start("p0")
    p0 = receive(p0, "p1", msg(1, [proposalOf("p1")])).state
    expect(p0.round).toBe(1)
    const closed = receive(p0, "p2", msg(1, [proposalOf("p2")]))
    expect(closed.state.round).toBe(2)
    expect(closed.state.suspect.size).toBe(0)
    expect(closed.state.locked.has("p0")).toBe(true)
    // The next round times out where a timed round would have: chained to the previous deadline.
    expect(closed.out).toContainEqual({
      _tag: "SetTimer",
      instance: 1,
      round: 2,
      afterMs: roundPeriodMs(early),
      chained: true
    })
  })

  it("decides in round 2 of a failure-free run once every round-2 message is in", () => {
    let p0 = start("p0")
    p0 = receive(p0, "p1", msg(1, [proposalOf("p1")])).state
    p0 = receive(p0, "p2", msg(1, [proposalOf("p2")])).state
    const all = [proposalOf("p0"), proposalOf("p1"), proposalOf("p2")]
    p0 = receive(p0, "p1", msg(2, all, ["p1"])).state
    const decided = receive(p0, "p2", msg(2, all, ["p2"]))
    const decide = decided.out.find((o) => o._tag === "Decide")
    expect(decide).toMatchObject({ _tag: "Decide", round: 2, suspects: [] })
    expect(decided.state.status).toBe("decided")
  })

  it("holds a message of the next round instead of closing early on it, so a peer still in flight is not suspected", () => {
    let p0 = start("p0")
    p0 = receive(p0, "p1", msg(1, [proposalOf("p1")])).state
    // p1 heard everyone already and moved on; p2's round-1 message to p0 is still in flight.
    const held = receive(p0, "p1", msg(2, [proposalOf("p1"), proposalOf("p2")], ["p1"]))
    expect(held.state.round).toBe(1)
    expect(held.out).toEqual([])
    expect(held.state.held).toHaveLength(1)
    // p2's message arrives: the round closes with no suspect, and the held message is merged in round 2.
    const closed = receive(held.state, "p2", msg(1, [proposalOf("p2")]))
    expect(closed.state.round).toBe(2)
    expect(closed.state.suspect.size).toBe(0)
    expect(closed.state.heard.has("p1")).toBe(true)
    expect(closed.state.locked.has("p1")).toBe(true)
  })

  it("still suspects a silent peer at the timer, and replays what it held", () => {
    let p0 = start("p0")
    p0 = receive(p0, "p1", msg(1, [proposalOf("p1")])).state
    p0 = receive(p0, "p1", msg(2, [proposalOf("p1")], ["p1"])).state
    const timedOut = stepInstance(p0, { _tag: "RoundTimeout", round: 1 })
    expect([...timedOut.state.suspect]).toEqual(["p2"])
    // Round 2: p2 is suspected, p1's held message is in, so nothing is awaited and round 2 closes at once.
    expect(timedOut.state.round).toBeGreaterThanOrEqual(2)
    expect(timedOut.out.some((o) => o._tag === "SetTimer" && o.round === 2 && o.chained === undefined)).toBe(true)
  })

  it("keeps only one held message per sender", () => {
    let p0 = start("p0")
    p0 = receive(p0, "p1", msg(2, [proposalOf("p1")], ["p1"])).state
    const again = receive(p0, "p1", msg(2, [proposalOf("p1")], ["p1"]))
    expect(again.state.held).toHaveLength(1)
    expect(again.state.dropped).toBe(p0.dropped + 1)
  })

  it("does not wait for a member silent in the previous instance, until it is heard from again", () => {
    const opened = (silent: ReadonlyArray<ProcessId>) =>
      stepInstance(
        createInstance({ instance: 1, self: "p0", members, proposal: [proposalOf("p0")], roundTimer: early, silent }),
        { _tag: "Start" }
      ).state
    const closed = receive(opened(["p2"]), "p1", msg(1, [proposalOf("p1")]))
    expect(closed.state.round).toBe(2)
    expect([...closed.state.suspect]).toEqual(["p2"])
    // p2 is back: once heard from in this instance it is awaited again.
    let back = receive(opened(["p2"]), "p2", msg(1, [proposalOf("p2")])).state
    expect(back.round).toBe(1)
    back = receive(back, "p1", msg(1, [proposalOf("p1")])).state
    expect(back.round).toBe(2)
    expect(back.suspect.size).toBe(0)
  })

  it("stops waiting for a peer the transport reports gone: the round closes on the live peers, suspecting it", () => {
    const p0 = receive(start("p0"), "p1", msg(1, [proposalOf("p1")])).state
    expect(unheardPeers(p0)).toEqual(["p2"])
    const gone = stepInstance(p0, { _tag: "Gone", process: "p2" })
    expect(gone.state.round).toBe(2)
    expect([...gone.state.suspect]).toEqual(["p2"])
    expect(unheardPeers(gone.state)).toEqual(["p1"])
    // A report about itself, a non-member or a peer already reported changes nothing.
    for (const process of ["p0", "p9", "p2"]) {
      expect(stepInstance(gone.state, { _tag: "Gone", process })).toEqual({ state: gone.state, out: [] })
    }
  })

  it("waits again for a peer reported gone once it is heard from (the report was wrong, or it reconnected)", () => {
    let p0 = stepInstance(start("p0"), { _tag: "Gone", process: "p2" }).state
    expect(p0.round).toBe(1)
    p0 = receive(p0, "p2", msg(1, [proposalOf("p2")])).state
    expect(p0.gone.size).toBe(0)
    expect(p0.round).toBe(1)
    p0 = receive(p0, "p1", msg(1, [proposalOf("p1")])).state
    expect(p0.round).toBe(2)
    expect(p0.suspect.size).toBe(0)
    expect(unheardPeers(p0)).toEqual(["p1", "p2"])
  })

  it("never gives up on more than t peers early: such a close is left to the timer", () => {
    const five = ids(5)
    let p0 = stepInstance(
      createInstance({ instance: 1, self: "p0", members: five, proposal: [proposalOf("p0")], roundTimer: early }),
      { _tag: "Start" }
    ).state
    p0 = receive(p0, "p1", msg(1, [proposalOf("p1")])).state
    for (const process of ["p2", "p3", "p4"]) p0 = stepInstance(p0, { _tag: "Gone", process }).state
    // Three of five gone: closing would suspect 3 > t = 2 and make p0 quit, so the round stays open.
    expect(p0.round).toBe(1)
    expect(p0.status).toBe("running")
  })

  it("with timed rounds a report changes nothing: only the timer closes a round", () => {
    const timed = stepInstance(create("p0", members), { _tag: "Start" }).state
    const gone = stepInstance(receive(timed, "p1", msg(1, [proposalOf("p1")])).state, { _tag: "Gone", process: "p2" })
    expect(gone.state.round).toBe(1)
    expect(gone.out).toEqual([])
  })
})
