/**
 * Seeded simulation of one POPUC instance (Alg. 2) among N = 2t+1 simulated replicas with drifting clocks,
 * start skew, a lossy reordering network and crash-stop/omission faults. Every decision is checked as it
 * happens (validity, uniform agreement, integrity); at the end, when the run was synchronous with f <= t, so
 * is termination: every correct process decides by round min(f+2, t+1), and without failures at exactly 2.
 */
import {
  createInstance,
  type InstanceOutput,
  type InstanceState,
  type StepInstance,
  stepInstance,
  thresholdOf
} from "../core/popuc-instance.js"
import { type ArmedTimer, timerDeadline } from "../core/round-timer.js"
import type { ProcessId, RoundMsg, Value } from "../core/types.js"
import { clientValue, sameValue, valueKey } from "../core/value.js"
import { DecisionChecker, type Violation } from "./decision-checker.js"
import { EventQueue } from "./event-queue.js"
import { CORRECT, isFaulty, Network, type ProcessFaults, type TimingKind } from "./network.js"
import { Prng } from "./prng.js"
import { type RunReport, TraceRing } from "./report.js"
import { clockRate, SIM_PERIOD_US, SIM_ROUND_TIMER, SIM_SIZES, startSkewUs, timingModel } from "./sim-config.js"

export const INSTANCE_SCENARIOS = ["failure-free", "crash", "omission", "async", "overload"] as const
export type InstanceScenario = (typeof INSTANCE_SCENARIOS)[number]

interface Plan {
  readonly timing: TimingKind
  readonly faults: ReadonlyArray<ProcessFaults>
  /** f > t or arbitrary delays: only safety is promised, so only safety is checked. */
  readonly safetyOnly: boolean
}

const randomOmissions = (rng: Prng, t: number): ProcessFaults => {
  const p = () => rng.pick([0, 0, 0.2, 0.5, 1])
  const faults: ProcessFaults = {
    crashAtUs: rng.chance(0.3) ? rng.int(0, (t + 2) * SIM_PERIOD_US) : undefined,
    sendOmitP: p(),
    recvOmitP: p(),
    lateP: rng.pick([0, 0, 0.3, 1]),
    omitFromUs: 0,
    omitUntilUs: Number.POSITIVE_INFINITY
  }
  return isFaulty(faults) ? faults : { ...faults, sendOmitP: 1 }
}

const crashOnly = (rng: Prng, t: number): ProcessFaults => ({
  ...CORRECT,
  crashAtUs: rng.int(0, (t + 2) * SIM_PERIOD_US)
})

const assignFaults = (rng: Prng, n: number, f: number, make: () => ProcessFaults): ReadonlyArray<ProcessFaults> => {
  const faulty = new Set(rng.sample([...Array(n).keys()], f))
  return [...Array(n).keys()].map((i) => (faulty.has(i) ? make() : CORRECT))
}

const planFor = (scenario: InstanceScenario, rng: Prng, n: number): Plan => {
  const t = thresholdOf(n)
  switch (scenario) {
    case "failure-free":
      return { timing: "sync", faults: assignFaults(rng, n, 0, () => CORRECT), safetyOnly: false }
    case "crash": {
      const f = rng.chance(0.5) ? t : rng.int(1, t)
      return { timing: "sync", faults: assignFaults(rng, n, f, () => crashOnly(rng, t)), safetyOnly: false }
    }
    case "omission":
      return {
        timing: "sync",
        faults: assignFaults(rng, n, rng.int(1, t), () => randomOmissions(rng, t)),
        safetyOnly: false
      }
    case "async":
      return {
        timing: "async",
        faults: assignFaults(rng, n, rng.int(0, t), () => randomOmissions(rng, t)),
        safetyOnly: true
      }
    case "overload": {
      const timing: TimingKind = rng.chance(0.5) ? "sync" : "async"
      return {
        timing,
        faults: assignFaults(rng, n, rng.int(t + 1, n), () => randomOmissions(rng, t)),
        safetyOnly: true
      }
    }
  }
}

type SimEvent =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Timeout"; readonly round: number }
  | { readonly _tag: "Deliver"; readonly from: ProcessId; readonly msg: RoundMsg }

interface SimProcess {
  readonly id: ProcessId
  readonly faults: ProcessFaults
  readonly rate: number
  state: InstanceState
  dead: boolean
  decidedRound: number | undefined
  selfCrashed: boolean
  /** The last timer armed, in µs (a chained timer is measured from it). */
  lastTimer: ArmedTimer | undefined
}

export interface InstanceRunOptions {
  readonly n?: number
  /** A replacement for the real step, to prove the checker catches a broken protocol. */
  readonly stepInstance?: StepInstance
}

export const runInstanceSim = (
  scenario: InstanceScenario,
  seed: number,
  options: InstanceRunOptions = {}
): RunReport => {
  const rng = new Prng(seed)
  // Always draw N, so that replaying with --n equal to the drawn N replays the exact same run.
  const drawnN = rng.pick(SIM_SIZES)
  const n = options.n ?? drawnN
  const t = thresholdOf(n)
  const step = options.stepInstance ?? stepInstance
  const plan = planFor(scenario, rng.fork(), n)
  const members = [...Array(n).keys()].map((i) => `p${i}`)
  const proposals = new Map<string, Value>()
  const processes = new Map<ProcessId, SimProcess>()
  const queue = new EventQueue<{ readonly to: ProcessId; readonly ev: SimEvent }>()
  const trace = new TraceRing()
  // Timed rounds (the paper) or rounds closed as soon as everyone awaited is heard from (round-timer.ts).
  const roundTimer = rng.chance(0.5) ? SIM_ROUND_TIMER : { ...SIM_ROUND_TIMER, closeOnAllHeard: true }
  members.forEach((id, i) => {
    const proposal = clientValue(id, `${id}@0`, 0, rng.bytes(rng.int(0, 8)))
    proposals.set(valueKey(proposal), proposal)
    const state = createInstance({ instance: 1, self: id, members, proposal: [proposal], roundTimer })
    const faults = plan.faults[i]!
    processes.set(id, {
      id,
      faults,
      rate: clockRate(rng, plan.timing),
      state,
      dead: false,
      decidedRound: undefined,
      selfCrashed: false,
      lastTimer: undefined
    })
    queue.push(startSkewUs(rng, plan.timing), { to: id, ev: { _tag: "Start" } })
  })
  const network = new Network(rng.fork(), timingModel(plan.timing), (p) => processes.get(p)!.faults)
  const checker = new DecisionChecker((v) => {
    const proposed = proposals.get(valueKey(v))
    return proposed !== undefined && sameValue(proposed, v)
  })
  const f = plan.faults.filter(isFaulty).length
  let violation: Violation | undefined
  let maxDecisionRound = 0
  let selfCrashes = 0

  const perform = (p: SimProcess, o: InstanceOutput, nowUs: number, crashing: boolean): void => {
    switch (o._tag) {
      case "Send":
        for (const to of o.to) {
          if (crashing && rng.chance(0.5)) continue // crashed halfway through its multi-send
          for (const at of network.arrivals(p.id, to, nowUs)) {
            queue.push(at, { to, ev: { _tag: "Deliver", from: p.id, msg: o.msg } })
          }
        }
        return
      case "SetTimer": {
        p.lastTimer = {
          instance: o.instance,
          deadline: Math.round(timerDeadline(o, nowUs, p.lastTimer, 1000 * p.rate))
        }
        queue.push(p.lastTimer.deadline, { to: p.id, ev: { _tag: "Timeout", round: o.round } })
        return
      }
      case "Decide":
        p.decidedRound = o.round
        maxDecisionRound = Math.max(maxDecisionRound, o.round)
        violation ??= checker.onDecide(p.id, o.instance, o.values)
        return
      case "Crash":
        p.selfCrashed = true
        selfCrashes++
        return
    }
  }

  for (let next = queue.pop(); next !== undefined && violation === undefined; next = queue.pop()) {
    const { atUs, event } = next
    const p = processes.get(event.to)!
    if (p.dead) continue
    trace.add(atUs, p.id, event.ev)
    const crashing = p.faults.crashAtUs !== undefined && atUs >= p.faults.crashAtUs
    const input =
      event.ev._tag === "Start"
        ? ({ _tag: "Start" } as const)
        : event.ev._tag === "Timeout"
          ? ({ _tag: "RoundTimeout", round: event.ev.round } as const)
          : ({ _tag: "Receive", from: event.ev.from, msg: event.ev.msg } as const)
    const result = step(p.state, input)
    p.state = result.state
    for (const o of result.out) perform(p, o, atUs, crashing)
    if (crashing) p.dead = true
  }

  violation ??= plan.safetyOnly ? undefined : checkTermination([...processes.values()], f, t, proposals)
  return {
    scenario,
    seed,
    n,
    f,
    violation,
    trace: violation === undefined ? [] : trace.snapshot(),
    stats: {
      decisions: checker.decisions,
      maxDecisionRound,
      messages: network.sent,
      droppedMessages: network.dropped,
      selfCrashes,
      instances: checker.decisions > 0 ? 1 : 0,
      deliveries: 0,
      rejoins: 0,
      learnerRejoins: 0
    }
  }
}

/**
 * Termination in a synchronous run with f <= t: "ckcuc ... is guaranteed to terminate in min(f+2, t+1) rounds",
 * "Most of the time no failures occur and the decision takes two rounds", and no correct process ever
 * suspects a correct one, so none crashes. A correct process decides V_p ∋ its own proposal, so by agreement
 * every decision holds every correct process's proposal.
 */
const checkTermination = (
  processes: ReadonlyArray<SimProcess>,
  f: number,
  t: number,
  proposals: ReadonlyMap<string, Value>
): Violation | undefined => {
  const bound = f === 0 ? 2 : Math.min(f + 2, t + 1)
  for (const p of processes) {
    if (isFaulty(p.faults)) continue
    if (p.selfCrashed) return { property: "termination", detail: `correct ${p.id} crashed itself (f=${f}, t=${t})` }
    if (p.decidedRound === undefined) return { property: "termination", detail: `correct ${p.id} never decided` }
    if (p.decidedRound > bound || (f === 0 && p.decidedRound !== 2)) {
      return {
        property: "termination",
        detail: `correct ${p.id} decided at round ${p.decidedRound}, bound min(f+2, t+1) = ${bound} (f=${f}, t=${t})`
      }
    }
    const own = [...proposals.values()].find((v) => v.proposer === p.id)!
    for (const q of processes) {
      if (q.state.status === "decided" && !q.state.values.has(valueKey(own))) {
        return { property: "termination", detail: `${q.id} decided without correct ${p.id}'s proposal` }
      }
    }
  }
  return undefined
}
