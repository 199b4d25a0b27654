/** Total-order broadcast (Alg. 4, "ckctob") against the paper's sentences, on a lockstep group of replicas. */
import { describe, expect, it } from "vitest"
import { emptyDeliveredIndex, markDelivered } from "./delivered-index.js"
import { initialSchedule } from "./membership.js"
import { makeRoundTimerConfig } from "./round-timer.js"
import { createTob, selectBatch, stepTob, type TobInput, type TobOutput, type TobState, type WireMsg } from "./tob.js"
import type { ProcessId, Value } from "./types.js"
import { clientValue, heartbeatValue, VALUE_OVERHEAD_BYTES, valueRef } from "./value.js"

/** Every process of these tests is in its first (and only) incarnation. */
const TEST_INCARNATION = "0000000000000001"
/** A value as `proposer#seq`: every value of these tests has the same incarnation. */
const shortKey = (v: { readonly proposer: string; readonly seq: number }) => `${v.proposer}#${v.seq}`

const timer = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1 })
const members = ["p0", "p1", "p2"]
const batchParams = (maxBatchBytes: number) => ({ self: "p0", incarnation: TEST_INCARNATION, maxBatchBytes })
const bytes = (...b: ReadonlyArray<number>) => new Uint8Array(b)
const tob = (self: ProcessId, maxBatchBytes = 1024, maxPending?: number, roundTimer = timer): TobState =>
  createTob({
    self,
    incarnation: TEST_INCARNATION,
    members,
    roundTimer,
    maxBatchBytes,
    ...(maxPending === undefined ? {} : { maxPending })
  })

const delivered = (out: ReadonlyArray<TobOutput>): ReadonlyArray<string> =>
  out.flatMap((o) => (o._tag === "Deliver" ? [shortKey(o.value)] : []))

class Group {
  readonly states = new Map<ProcessId, TobState>()
  readonly outputs = new Map<ProcessId, Array<TobOutput>>()
  private inFlight: Array<{ from: ProcessId; to: ProcessId; msg: WireMsg }> = []

  constructor(maxBatchBytes = 1024, roundTimer = timer) {
    for (const p of members) {
      this.states.set(p, tob(p, maxBatchBytes, undefined, roundTimer))
      this.outputs.set(p, [])
    }
  }

  apply(p: ProcessId, input: TobInput): ReadonlyArray<TobOutput> {
    const r = stepTob(this.states.get(p)!, input)
    this.states.set(p, r.state)
    this.outputs.get(p)!.push(...r.out)
    for (const o of r.out) if (o._tag === "Send") for (const to of o.to) this.inFlight.push({ from: p, to, msg: o.msg })
    return r.out
  }

  /**
   * Delivers what is in flight, including what those deliveries send (sync-start's start, and round-1 messages
   * of processes it starts), then fires every running timer: a synchronous round with zero start skew.
   */
  round(): this {
    this.deliverInFlight()
    for (const [p, s] of this.states) {
      const m = s.multi
      if (s.phase === "running" && m !== undefined && m.current.round > 0) {
        this.apply(p, { _tag: "RoundTimeout", instance: m.current.instance, round: m.current.round })
      }
    }
    return this
  }

  /** Delivers what is in flight and what those deliveries send, firing no timer. */
  deliverInFlight(): this {
    while (this.inFlight.length > 0) {
      const delivering = this.inFlight
      this.inFlight = []
      for (const e of delivering) this.apply(e.to, { _tag: "Receive", from: e.from, msg: e.msg })
    }
    return this
  }
}

describe("total-order broadcast (Alg. 4)", () => {
  it("ckctob uses the sync-start primitive at the first broadcast call", () => {
    const out = stepTob(tob("p1"), { _tag: "Broadcast", payload: bytes(1) }).out
    expect(out).toEqual([
      { _tag: "Queued", value: clientValue("p1", TEST_INCARNATION, 0, bytes(1)) },
      { _tag: "Send", to: ["p0"], msg: { _tag: "StartRequest" } }
    ])
    const leader = stepTob(tob("p0"), { _tag: "Broadcast", payload: bytes(1) }).out
    expect(leader.find((o) => o._tag === "Send" && o.msg._tag === "Round")).toMatchObject({
      msg: { instance: 1, round: 1, values: [clientValue("p0", TEST_INCARNATION, 0, bytes(1))] }
    })
  })

  it("If there are no pending values, the □ value is proposed instead to serve as a heartbeat for other processes", () => {
    expect(selectBatch(batchParams(100), [], 7)).toEqual([heartbeatValue("p0", TEST_INCARNATION, 7)])
  })

  it("every process receives requests from clients, buffers them and proposes them ... without waiting to fill a batch, bounded in bytes", () => {
    const pending = [1, 2, 3].map((seq) => clientValue("p0", TEST_INCARNATION, seq, new Uint8Array(10)))
    const size = VALUE_OVERHEAD_BYTES + 10
    expect(selectBatch(batchParams(2 * size), pending, 1)).toEqual(pending.slice(0, 2))
    expect(selectBatch(batchParams(10 * size), pending, 1)).toEqual(pending)
    // A value larger than the bound still goes out, alone, rather than starving.
    expect(selectBatch(batchParams(1), pending, 1)).toEqual(pending.slice(0, 1))
  })

  it("At the end an instance, correct processes deliver values in the decision set V in a deterministic order, e.g., by proposer id; heartbeats are filtered", () => {
    const g = new Group()
    g.apply("p2", { _tag: "Broadcast", payload: bytes(20) })
    g.apply("p2", { _tag: "Broadcast", payload: bytes(21) })
    g.apply("p1", { _tag: "Broadcast", payload: bytes(10) })
    for (let i = 0; i < 6; i++) g.round()
    const sequences = members.map((p) => delivered(g.outputs.get(p)!))
    expect(sequences[0]).toEqual(["p1#0", "p2#0", "p2#1"])
    expect(sequences[1]).toEqual(sequences[0])
    expect(sequences[2]).toEqual(sequences[0])
    for (const p of members) expect(g.states.get(p)!.pending).toEqual([])
  })

  it("No message is delivered twice: a value decided in two instances is delivered once", () => {
    const v = clientValue("p1", TEST_INCARNATION, 0, bytes(9))
    const r = stepTob(tob("p0"), {
      _tag: "Join",
      startInstance: 3,
      decisions: [
        { instance: 1, values: [v, heartbeatValue("p2", TEST_INCARNATION, 1)] },
        { instance: 2, values: [heartbeatValue("p0", TEST_INCARNATION, 2), v] }
      ],
      schedule: initialSchedule(members)
    })
    expect(delivered(r.out)).toEqual(["p1#0"])
    expect(r.state.nextDeliverInstance).toBe(3)
  })

  it("values proposed but not decided stay pending and are proposed again after a rejoin", () => {
    let s = tob("p2")
    s = stepTob(s, { _tag: "Broadcast", payload: bytes(5) }).state
    s = stepTob(s, { _tag: "Receive", from: "p0", msg: { _tag: "Start" } }).state
    expect(s.phase).toBe("running")
    // Excluded: the group is two instances ahead.
    const crashed = stepTob(s, {
      _tag: "Receive",
      from: "p0",
      msg: { _tag: "Round", instance: 3, round: 1, values: [], locked: [], decided: [] }
    })
    expect(crashed.state.phase).toBe("crashed")
    expect(crashed.out).toEqual([expect.objectContaining({ _tag: "Crash" })])
    const decisions = [1, 2, 3].map((instance) => ({
      instance,
      values: [heartbeatValue("p0", TEST_INCARNATION, instance)]
    }))
    const joined = stepTob(crashed.state, {
      _tag: "Join",
      startInstance: 4,
      decisions,
      schedule: initialSchedule(members)
    })
    expect(joined.state.phase).toBe("running")
    expect(joined.state.multi?.current.instance).toBe(4)
    expect([...joined.state.multi!.current.values.values()].map(shortKey)).toEqual(["p2#0"])
  })

  it("a join from a state snapshot skips the instances the snapshot covers and keeps 'no duplication' across them", () => {
    // p2 broadcast two values, then fell far behind; a peer's snapshot at instance 50 reflects p2#0 and p1#0.
    let s = tob("p2")
    s = stepTob(s, { _tag: "Broadcast", payload: bytes(1) }).state
    s = stepTob(s, { _tag: "Broadcast", payload: bytes(2) }).state
    const p1v = clientValue("p1", TEST_INCARNATION, 0, bytes(7))
    const index = markDelivered(
      markDelivered(emptyDeliveredIndex, clientValue("p2", TEST_INCARNATION, 0, bytes(1))),
      p1v
    )
    const r = stepTob(s, {
      _tag: "Join",
      startInstance: 52,
      snapshot: { instance: 50, delivered: index },
      // p1#0 decided again after the snapshot (a re-proposal): not delivered twice; p2#1 is new.
      decisions: [
        { instance: 50, values: [p1v] },
        { instance: 51, values: [clientValue("p2", TEST_INCARNATION, 1, bytes(2))] }
      ],
      schedule: initialSchedule(members)
    })
    expect(delivered(r.out)).toEqual(["p2#1"])
    expect(r.state.nextDeliverInstance).toBe(52)
    // p2#0 is in the snapshot: no longer pending, never proposed again; seqs continue after p2#1.
    expect(r.state.pending).toEqual([])
    expect(r.state.nextSeq).toBe(2)
    expect(() =>
      stepTob(s, {
        _tag: "Join",
        startInstance: 40,
        snapshot: { instance: 50, delivered: index },
        decisions: [],
        schedule: initialSchedule(members)
      })
    ).toThrow(/past the join instance/)
  })

  it("a process that self-quit learns the relayed decision from round 1 of the next instance and takes part again", () => {
    // "a process that self-quits ... is not (immediately) excluded from future instances, allowing it
    // asynchronously to ask for missing values ... and start reproposing once it has caught up."
    let s = tob("p2")
    s = stepTob(s, { _tag: "Broadcast", payload: bytes(5) }).state
    s = stepTob(s, { _tag: "Receive", from: "p0", msg: { _tag: "Start" } }).state
    const round1 = (
      from: ProcessId,
      instance: number,
      values: ReadonlyArray<Value>,
      decided: ReadonlyArray<Value> = []
    ) =>
      ({
        _tag: "Receive",
        from,
        msg: {
          _tag: "Round",
          instance,
          round: 1,
          values,
          locked: [],
          decided: decided.map(valueRef)
        }
      }) as const
    const hb0 = heartbeatValue("p0", TEST_INCARNATION, 1)
    const hb1 = heartbeatValue("p1", TEST_INCARNATION, 1)
    s = stepTob(s, round1("p0", 1, [hb0])).state
    s = stepTob(s, round1("p1", 1, [hb1])).state
    // Excluded: a message of instance 3 says the group is two instances ahead.
    const crashed = stepTob(s, {
      _tag: "Receive",
      from: "p0",
      msg: { _tag: "Round", instance: 3, round: 1, values: [], locked: [], decided: [] }
    })
    expect(crashed.state.phase).toBe("crashed")
    // Round 1 of instance 2 relays the decision of instance 1; p2 holds every value of it.
    const own = clientValue("p2", TEST_INCARNATION, 0, bytes(5))
    const learned = stepTob(
      crashed.state,
      round1("p1", 2, [heartbeatValue("p1", TEST_INCARNATION, 2)], [hb0, hb1, own])
    )
    expect(delivered(learned.out)).toEqual(["p2#0"])
    expect(learned.out.map((o) => o._tag)).toContain("Rejoined")
    expect(learned.state.phase).toBe("running")
    expect(learned.state.multi?.current.instance).toBe(2)
    expect(learned.state.multi?.current.round).toBe(1)
    // It proposes again in round 1 of instance 2 (a heartbeat: its value was delivered), on time.
    const sends = learned.out.filter((o) => o._tag === "Send" && o.msg._tag === "Round" && o.msg.instance === 2)
    expect(sends.length).toBeGreaterThan(0)
    // A state transfer arriving afterwards is moot.
    const late = stepTob(learned.state, {
      _tag: "Join",
      startInstance: 3,
      decisions: [],
      schedule: initialSchedule(members)
    })
    expect(late.state).toBe(learned.state)
  })

  it("a learner missing a value of the relayed decision stays crashed (the shell's state transfer takes over)", () => {
    let s = tob("p2")
    s = stepTob(s, { _tag: "Receive", from: "p0", msg: { _tag: "Start" } }).state
    const crashed = stepTob(s, {
      _tag: "Receive",
      from: "p0",
      msg: { _tag: "Round", instance: 3, round: 1, values: [], locked: [], decided: [] }
    }).state
    const unknown = { proposer: "p1", incarnation: TEST_INCARNATION, seq: 4, kind: "client" as const }
    const r = stepTob(crashed, {
      _tag: "Receive",
      from: "p0",
      msg: { _tag: "Round", instance: 2, round: 1, values: [], locked: [], decided: [unknown] }
    })
    expect(r.state.phase).toBe("crashed")
    expect(r.out).toEqual([])
  })

  it("never takes part twice in one attempt of an instance: a Join into the attempt it self-quit is refused", () => {
    let s = tob("p2")
    s = stepTob(s, { _tag: "Broadcast", payload: bytes(5) }).state
    s = stepTob(s, { _tag: "Receive", from: "p0", msg: { _tag: "Start" } }).state
    expect(s.multi?.current.round).toBe(1)
    const behind = { _tag: "Round", instance: 3, round: 1, values: [], locked: [], decided: [] } as const
    const crashed = stepTob(s, { _tag: "Receive", from: "p0", msg: behind }).state
    expect(crashed.quit).toEqual({ instance: 1, attempt: 0, entered: true })
    const join = (attempt: number) =>
      stepTob(crashed, { _tag: "Join", startInstance: 1, attempt, decisions: [], schedule: initialSchedule(members) })
    // Its first round-1 message of attempt 0 is out already; a second, different one would equivocate.
    expect(() => join(0)).toThrow(/took part in up to attempt 0/)
    expect(join(1).state.multi?.current).toMatchObject({ instance: 1, attempt: 1 })
  })

  it("a join must come with every decision it has not delivered yet", () => {
    expect(() =>
      stepTob(tob("p0"), {
        _tag: "Join",
        startInstance: 3,
        decisions: [{ instance: 2, values: [] }],
        schedule: initialSchedule(members)
      })
    ).toThrow(/missing the decision of 1/)
  })

  it("puts a limit on pending values", () => {
    let s = tob("p0", 1024, 1)
    s = stepTob(s, { _tag: "Broadcast", payload: bytes(1) }).state
    expect(stepTob(s, { _tag: "Broadcast", payload: bytes(2) }).out).toEqual([
      { _tag: "Rejected", reason: "pending buffer full" }
    ])
  })

  it("a round-1 message that arrives before sync-start's start opens instance 1 (catch-up)", () => {
    const r = stepTob(tob("p1"), {
      _tag: "Receive",
      from: "p0",
      msg: { _tag: "Round", instance: 1, round: 1, values: [], locked: [], decided: [] }
    })
    expect(r.state.phase).toBe("running")
    expect(r.out.some((o) => o._tag === "Started")).toBe(true)
  })

  it("a process outside Π ignores the bootstrap and only starts through Join", () => {
    const outsider = createTob({
      self: "p9",
      incarnation: TEST_INCARNATION,
      members,
      roundTimer: timer,
      maxBatchBytes: 64
    })
    const round1 = { _tag: "Round", instance: 1, round: 1, values: [], locked: [], decided: [] } as const
    expect(stepTob(outsider, { _tag: "Receive", from: "p0", msg: round1 }).state.phase).toBe("idle")
    expect(stepTob(outsider, { _tag: "Receive", from: "p0", msg: { _tag: "Start" } }).state.phase).toBe("idle")
  })

  it("membership commands are decided and delivered like any value", () => {
    const g = new Group()
    g.apply("p0", { _tag: "ProposeMembership", members: ["p0", "p1", "p2", "p3", "p4"] })
    for (let i = 0; i < 4; i++) g.round()
    const d = g.outputs.get("p1")!.find((o): o is Extract<TobOutput, { _tag: "Deliver" }> => o._tag === "Deliver")
    expect(d?.value).toMatchObject({
      kind: "membership",
      members: ["p0", "p1", "p2", "p3", "p4"]
    } satisfies Partial<Value>)
  })

  it("with rounds closed on all heard, instances run on messages alone, and a broadcast ends an idle gap", () => {
    const early = makeRoundTimerConfig({ interactionMs: 1, driftMs: 0.1, instanceGapMs: 3, closeOnAllHeard: true })
    const g = new Group(1024, early)
    g.apply("p0", { _tag: "Broadcast", payload: bytes(1) })
    g.deliverInFlight()
    // Instance 1 was decided and delivered everywhere without a single timer; all wait out the idle gap.
    for (const p of members) {
      expect(delivered(g.outputs.get(p)!)).toEqual(["p0#0"])
      expect(g.states.get(p)!.multi?.opening?.instance).toBe(2)
    }
    const out = g.apply("p2", { _tag: "Broadcast", payload: bytes(2) })
    expect(out.find((o) => o._tag === "Send")).toMatchObject({
      msg: { instance: 2, round: 1, values: [clientValue("p2", TEST_INCARNATION, 0, bytes(2))] }
    })
    g.deliverInFlight()
    for (const p of members) {
      expect(delivered(g.outputs.get(p)!)).toContain("p2#0")
    }
  })
})
