/**
 * Seeded simulation of a replica group running total-order broadcast (Alg. 4) on back-to-back POPUC instances:
 * sync-start with a perfect failure detector, client load, crash-stop with restart, transient omissions,
 * self-crashes, rejoin through state transfer, and membership changes decided through consensus.
 *
 * The simulated shell (what the engine shell will do for real):
 * - on a self-crash or a restart it asks a random peer to rejoin (`JoinRequest`), buffering the round
 *   messages it receives meanwhile, and retries with another peer if no answer comes;
 * - a peer answers at its next decision k for which the requester is a member of k+1: `JoinReply` carries the
 *   decisions the requester misses up to k and the membership schedule, and the requester `Join`s at k+1.
 *   Answering exactly at an instance boundary is what lets the requester start k+1 with its peers.
 */

import type { MembershipSchedule } from "../core/membership.js"
import { membersAt } from "../core/membership.js"
import { type StepInstance, thresholdOf } from "../core/popuc-instance.js"
import { type ArmedTimer, type RoundTimerConfig, timerDeadline } from "../core/round-timer.js"
import {
  createTob,
  type DecidedInstance,
  isTakingPart,
  scheduleOf,
  stepTob,
  type TobInput,
  type TobOutput,
  type TobState,
  type TobStep,
  takesPartAgain,
  type WireMsg
} from "../core/tob.js"
import type { ProcessId, RoundMsg, Value } from "../core/types.js"
import type { Violation } from "./decision-checker.js"
import { EventQueue } from "./event-queue.js"
import { CORRECT, isFaulty, Network, type ProcessFaults, type TimingKind } from "./network.js"
import type { Prng } from "./prng.js"
import { type RunReport, TraceRing } from "./report.js"
import { clockRate, drawGroup, SIM_PERIOD_US, SIM_ROUND_TIMER, timingModel } from "./sim-config.js"
import { TobChecker } from "./tob-checker.js"

export const TOB_SCENARIOS = [
  "tob-failure-free",
  "tob-crash-restart",
  "tob-omission",
  "tob-membership",
  "tob-async"
] as const
export type TobScenario = (typeof TOB_SCENARIOS)[number]

const P = SIM_PERIOD_US

interface MembershipChange {
  readonly atUs: number
  readonly members: ReadonlyArray<ProcessId>
}

interface TobPlan {
  readonly timing: TimingKind
  readonly faults: ReadonlyMap<ProcessId, ProcessFaults>
  readonly restart: boolean
  readonly safetyOnly: boolean
  readonly failureFree: boolean
  readonly spares: ReadonlyArray<ProcessId>
  readonly change: MembershipChange | undefined
  readonly endUs: number
  readonly loadEndUs: number
  /** Values broadcast after this time may legitimately still be pending at the end. */
  readonly validityBeforeUs: number
  /** From here on no fault is injected: the run may stop early once everything broadcast is delivered. */
  readonly quietFromUs: number
}

type SimEvent =
  | { readonly _tag: "Boot" }
  | { readonly _tag: "Timeout"; readonly instance: number; readonly round: number }
  | { readonly _tag: "Deliver"; readonly from: ProcessId; readonly msg: WireMsg }
  | { readonly _tag: "JoinRequest"; readonly from: ProcessId; readonly fromInstance: number }
  | {
      readonly _tag: "JoinReply"
      readonly startInstance: number
      readonly decisions: ReadonlyArray<DecidedInstance>
      readonly schedule: MembershipSchedule
    }
  | { readonly _tag: "JoinRetry"; readonly attempt: number }
  | { readonly _tag: "Rejoin" }
  | { readonly _tag: "Kill" }
  | { readonly _tag: "Restart" }
  | { readonly _tag: "Failure"; readonly process: ProcessId }
  /** The transport's report that `process` has no connection (engine-loop.ts probes); may be wrong. */
  | { readonly _tag: "Gone"; readonly process: ProcessId }
  | { readonly _tag: "Client"; readonly input: Extract<TobInput, { _tag: "Broadcast" | "ProposeMembership" }> }
  /** Checks whether a quiet synchronous run has delivered everything, to stop it early. */
  | { readonly _tag: "Probe" }

interface Joining {
  readonly attempt: number
  readonly buffer: Array<{ readonly from: ProcessId; readonly msg: RoundMsg }>
}

interface Node {
  readonly id: ProcessId
  readonly rate: number
  readonly faults: ProcessFaults
  tob: TobState
  down: boolean
  dying: boolean
  left: boolean
  joining: Joining | undefined
  joinAttempts: number
  /** Every decision this node knows, decided or fetched: what it serves to joining peers. */
  readonly log: Map<number, ReadonlyArray<Value>>
  readonly joinRequests: Map<ProcessId, number>
  /** The last timer armed, in µs (a chained timer is measured from its deadline). */
  lastTimer: ArmedTimer | undefined
}

export interface TobRunOptions {
  readonly n?: number
  readonly stepInstance?: StepInstance
  /** A replacement for the real TOB step (mutation tests). */
  readonly stepTob?: (s: TobState, input: TobInput) => TobStep
}

const BUFFER_LIMIT_PER_PEER = 8
/** Client requests are addressed to no replica in particular: `clientTarget` picks one when they fire. */
const CLIENT = "client"
/**
 * Asynchrony for multi-instance runs is milder than for single instances: with 30% clock drift and 20% slow
 * messages a group never gets past its first instances, and safety is best exercised while it makes progress.
 */
const ASYNC_NETWORK = { dropP: 0.02, slowP: 0.05 } as const
const ASYNC_DRIFT = 0.05

/**
 * Omissions in a window. Synchronous runs open it after the bootstrap: sync-start (Alg. 3) assumes a perfect
 * failure detector, which an omission-faulty leader would defeat, so the paper's model has none there.
 */
const transientOmissions = (rng: Prng, fromUs: number, untilUs: number): ProcessFaults => ({
  crashAtUs: undefined,
  sendOmitP: rng.pick([0, 0.3, 1]),
  recvOmitP: rng.pick([0, 0.3, 1]),
  lateP: rng.pick([0, 0.5]),
  omitFromUs: fromUs,
  omitUntilUs: untilUs
})

/** Replace one or two members, grow by two, or shrink by two; N stays odd (N = 2t+1). */
const membershipChange = (
  rng: Prng,
  members: ReadonlyArray<ProcessId>
): { readonly spares: ReadonlyArray<ProcessId>; readonly members: ReadonlyArray<ProcessId> } => {
  const n = members.length
  const spareIds = (k: number) => [...Array(k).keys()].map((i) => `p${n + i}`)
  const kind = rng.pick(n >= 5 ? ["replace", "grow", "shrink"] : ["replace", "grow"])
  if (kind === "grow") return { spares: spareIds(2), members: [...members, ...spareIds(2)] }
  const removed = new Set(rng.sample(members, kind === "shrink" ? 2 : rng.int(1, Math.min(2, thresholdOf(n)))))
  const spares = kind === "shrink" ? [] : spareIds(removed.size)
  return { spares, members: [...members.filter((m) => !removed.has(m)), ...spares] }
}

const planFor = (scenario: TobScenario, rng: Prng, members: ReadonlyArray<ProcessId>): TobPlan => {
  const n = members.length
  const t = thresholdOf(n)
  const faults = new Map<ProcessId, ProcessFaults>()
  const base = {
    timing: "sync" as TimingKind,
    restart: true,
    safetyOnly: false,
    failureFree: false,
    spares: [] as ReadonlyArray<ProcessId>,
    change: undefined as MembershipChange | undefined,
    endUs: 70 * P,
    loadEndUs: 30 * P,
    validityBeforeUs: 30 * P,
    quietFromUs: 30 * P
  }
  switch (scenario) {
    case "tob-failure-free":
      return {
        ...base,
        faults,
        restart: false,
        failureFree: true,
        endUs: 50 * P,
        loadEndUs: 20 * P,
        validityBeforeUs: 20 * P,
        quietFromUs: 20 * P
      }
    case "tob-crash-restart":
      for (const p of rng.sample(members, rng.int(1, t))) {
        // Sometimes the sync-start leader dies before anything happens, exercising Alg. 3's leader change.
        const atBoot = p === members[0] && rng.chance(0.3)
        faults.set(p, { ...CORRECT, crashAtUs: atBoot ? 0 : rng.int(0, 16 * P) })
      }
      return { ...base, faults }
    case "tob-omission":
      for (const p of rng.sample(members, rng.int(1, t)))
        faults.set(p, transientOmissions(rng, 3 * P, rng.int(4 * P, 16 * P)))
      return { ...base, faults }
    case "tob-membership": {
      const change = membershipChange(rng, members)
      // One extra crash only where the group can afford it next to the members still joining.
      if (n >= 7 && rng.chance(0.5)) faults.set(rng.pick(members), { ...CORRECT, crashAtUs: rng.int(2 * P, 20 * P) })
      return {
        ...base,
        faults,
        spares: change.spares,
        change: { atUs: rng.int(2 * P, 12 * P), members: change.members }
      }
    }
    case "tob-async":
      for (const p of rng.sample(members, rng.int(0, n))) {
        faults.set(
          p,
          rng.chance(0.5)
            ? transientOmissions(rng, 0, rng.int(0, 30 * P))
            : { ...CORRECT, crashAtUs: rng.int(0, 30 * P) }
        )
      }
      return { ...base, timing: "async", faults, safetyOnly: true, endUs: 40 * P }
  }
}

export const runTobSim = (scenario: TobScenario, seed: number, options: TobRunOptions = {}): RunReport => {
  const { rng, n, members } = drawGroup(seed, options.n)
  const plan = planFor(scenario, rng.fork(), members)
  const step = options.stepTob ?? stepTob
  const maxBatchBytes = rng.pick([48, 256, 4096])
  // Host-turnaround gap between instances: none (back-to-back, as in the paper), or up to ΔI.
  const gapMs = rng.pick([0, 0, SIM_ROUND_TIMER.interactionMs / 2, SIM_ROUND_TIMER.interactionMs])
  // Timed rounds (the paper), or rounds closed as soon as everyone awaited is heard from (round-timer.ts).
  const closeOnAllHeard = rng.chance(0.5)
  const roundTimer: RoundTimerConfig = {
    ...SIM_ROUND_TIMER,
    ...(gapMs === 0 ? {} : { instanceGapMs: gapMs }),
    ...(closeOnAllHeard ? { closeOnAllHeard } : {})
  }
  const queue = new EventQueue<{ readonly to: ProcessId; readonly ev: SimEvent }>()
  const trace = new TraceRing()
  const checker = new TobChecker(plan.failureFree ? 2 : undefined)
  const nodes = new Map<ProcessId, Node>()
  for (const id of [...members, ...plan.spares]) {
    nodes.set(id, {
      id,
      rate: clockRate(rng, plan.timing, ASYNC_DRIFT),
      faults: plan.faults.get(id) ?? CORRECT,
      tob: createTob({
        self: id,
        incarnation: `${id}@0`,
        members,
        roundTimer,
        maxBatchBytes,
        ...(options.stepInstance === undefined ? {} : { stepInstance: options.stepInstance })
      }),
      down: false,
      dying: false,
      left: false,
      joining: undefined,
      joinAttempts: 0,
      log: new Map(),
      joinRequests: new Map(),
      lastTimer: undefined
    })
  }
  const network = new Network(rng.fork(), timingModel(plan.timing, ASYNC_NETWORK), (p) => nodes.get(p)!.faults)
  const ids = [...nodes.keys()]
  let violation: Violation | undefined
  let selfCrashes = 0
  let rejoins = 0
  let learnerRejoins = 0
  let maxInstance = 0

  const send = (from: ProcessId, to: ProcessId, nowUs: number, ev: SimEvent): void => {
    for (const at of network.arrivals(from, to, nowUs)) queue.push(at, { to, ev })
  }

  const startJoining = (node: Node, nowUs: number): void => {
    node.joinAttempts++
    node.joining = { attempt: node.joinAttempts, buffer: [] }
    const peers = ids.filter((p) => p !== node.id && !nodes.get(p)!.left)
    send(node.id, rng.pick(peers), nowUs, {
      _tag: "JoinRequest",
      from: node.id,
      fromInstance: node.tob.nextDeliverInstance
    })
    queue.push(nowUs + 4 * P, { to: node.id, ev: { _tag: "JoinRetry", attempt: node.joinAttempts } })
  }

  const goDown = (node: Node, nowUs: number): void => {
    node.down = true
    node.dying = false
    node.joining = undefined
    node.joinRequests.clear()
    if (plan.restart) queue.push(nowUs + rng.int(2 * P, 8 * P), { to: node.id, ev: { _tag: "Restart" } })
    for (const p of ids) {
      if (p === node.id) continue
      queue.push(nowUs + 2 * P, { to: p, ev: { _tag: "Failure", process: node.id } })
      // The shell's probe finds the connection gone within a fraction of a round, sometimes only rounds later.
      queue.push(nowUs + rng.int(P / 20, 2 * P), { to: p, ev: { _tag: "Gone", process: node.id } })
    }
  }

  /** Answers held join requests once `decided` is decided: the requester joins at decided + 1. */
  const answerJoins = (node: Node, decided: number, nowUs: number): void => {
    const schedule = scheduleOf(node.tob)
    for (const [requester, fromInstance] of node.joinRequests) {
      if (!membersAt(schedule, decided + 1).includes(requester) || decided + 1 < fromInstance) continue
      const decisions: Array<DecidedInstance> = []
      for (let instance = fromInstance; instance <= decided; instance++) {
        const values = node.log.get(instance)
        if (values !== undefined) decisions.push({ instance, values })
      }
      if (decisions.length !== decided + 1 - fromInstance) continue // cannot serve this range
      node.joinRequests.delete(requester)
      send(node.id, requester, nowUs, { _tag: "JoinReply", startInstance: decided + 1, decisions, schedule })
    }
  }

  const perform = (node: Node, o: TobOutput, nowUs: number): void => {
    switch (o._tag) {
      case "Send":
        for (const to of o.to) {
          if (node.dying && rng.chance(0.5)) continue // crashed halfway through its multi-send
          send(node.id, to, nowUs, { _tag: "Deliver", from: node.id, msg: o.msg })
        }
        return
      case "SetTimer": {
        const deadline = Math.round(timerDeadline(o, nowUs, node.lastTimer, 1000 * node.rate))
        node.lastTimer = { instance: o.instance, deadline }
        queue.push(deadline, { to: node.id, ev: { _tag: "Timeout", instance: o.instance, round: o.round } })
        return
      }
      case "Queued":
        violation ??= checker.onQueued(node.id, o.value, nowUs)
        return
      case "Started":
        maxInstance = Math.max(maxInstance, o.instance)
        violation ??= checker.onStarted(node.id, o.instance, o.members)
        return
      case "Decide":
        node.log.set(o.instance, o.values)
        violation ??= checker.onDecide(node.id, o.instance, o.round, o.values)
        return
      case "Deliver":
        violation ??= checker.onDeliver(node.id, o.instance, o.value)
        return
      case "Crash":
        selfCrashes++
        queue.push(nowUs + Math.round(P / 2), { to: node.id, ev: { _tag: "Rejoin" } })
        return
      case "Left":
        node.left = true
        return
      case "Rejected":
        return
    }
  }

  const feed = (node: Node, input: TobInput, nowUs: number): void => {
    const result = step(node.tob, input)
    node.tob = result.state
    let decided: number | undefined
    for (const o of result.out) {
      perform(node, o, nowUs)
      if (o._tag === "Decide") decided = o.instance
    }
    if (decided !== undefined) answerJoins(node, decided, nowUs)
    if (node.dying) goDown(node, nowUs)
  }

  const onJoinReply = (node: Node, ev: Extract<SimEvent, { _tag: "JoinReply" }>, nowUs: number): void => {
    if (node.joining === undefined || ev.startInstance < node.tob.nextDeliverInstance) return
    // The peer answered before deciding the instance this node self-quit: it never takes part in it again
    // (popuc-multi.ts, "Attempts"), so it waits for a later answer (its JoinRetry asks again).
    if (takesPartAgain(node.tob.quit, ev.startInstance, 0)) return
    const buffered = node.joining.buffer
    node.joining = undefined
    rejoins++
    for (const d of ev.decisions) node.log.set(d.instance, d.values)
    feed(node, { _tag: "Join", startInstance: ev.startInstance, decisions: ev.decisions, schedule: ev.schedule }, nowUs)
    for (const m of buffered) {
      if (node.down || node.joining !== undefined) return
      if (m.msg.instance >= ev.startInstance) feed(node, { _tag: "Receive", from: m.from, msg: m.msg }, nowUs)
    }
  }

  /** Nothing left to wait for: every member that is up runs, and every broadcast value is delivered. */
  const quiescent = (): boolean =>
    checkLiveness(
      [...nodes.values()],
      checker,
      { ...plan, validityBeforeUs: Number.POSITIVE_INFINITY },
      maxInstance
    ) === undefined

  /**
   * Client requests go to a random replica that is up (a real client retries elsewhere): running, or crashed
   * and waiting to rejoin, whose pending values must survive the rejoin; never one that has not joined yet.
   */
  const clientTarget = (): Node | undefined => {
    const ready = [...nodes.values()].filter(
      (x) => !x.down && !x.left && x.tob.phase !== "left" && (x.tob.phase !== "idle" || members.includes(x.id))
    )
    return ready.length === 0 ? undefined : rng.pick(ready)
  }

  const handle = (node: Node, ev: SimEvent, nowUs: number): void => {
    switch (ev._tag) {
      case "Restart":
        node.down = false
        startJoining(node, nowUs)
        return
      case "Kill":
        if (node.tob.phase === "running" && node.joining === undefined) node.dying = true
        else goDown(node, nowUs)
        return
      case "Client":
        return
      case "Boot":
        // The shell repeats sync-start until the group started: a start-request or start can be lost.
        if (node.joining === undefined && node.tob.phase === "idle") {
          feed(node, { _tag: "SyncStart" }, nowUs)
          queue.push(nowUs + 4 * P, { to: node.id, ev: { _tag: "Boot" } })
        }
        return
      case "Deliver":
        if (node.joining !== undefined) {
          if (ev.msg._tag === "Round" && node.joining.buffer.length < BUFFER_LIMIT_PER_PEER * ids.length) {
            node.joining.buffer.push({ from: ev.from, msg: ev.msg })
          }
          // Like the engine shell, a self-crashed core keeps hearing round messages while its state transfer
          // is under way, as a learner (core/learner.ts), and may take part again before the transfer arrives.
          if (ev.msg._tag === "Round" && node.tob.phase === "crashed") {
            feed(node, { _tag: "Receive", from: ev.from, msg: ev.msg }, nowUs)
            if (isTakingPart(node.tob)) {
              node.joining = undefined
              learnerRejoins++
            }
          }
          return
        }
        feed(node, { _tag: "Receive", from: ev.from, msg: ev.msg }, nowUs)
        return
      case "Timeout":
        if (node.joining === undefined)
          feed(node, { _tag: "RoundTimeout", instance: ev.instance, round: ev.round }, nowUs)
        return
      case "Failure":
        if (node.joining === undefined) feed(node, { _tag: "Failure", process: ev.process }, nowUs)
        return
      case "Gone":
        if (node.joining === undefined) feed(node, { _tag: "Gone", process: ev.process }, nowUs)
        return
      case "JoinRequest":
        if (node.joining === undefined && node.tob.phase === "running") node.joinRequests.set(ev.from, ev.fromInstance)
        return
      case "JoinReply":
        onJoinReply(node, ev, nowUs)
        return
      case "JoinRetry":
        if (node.joining?.attempt === ev.attempt) startJoining(node, nowUs)
        return
      case "Rejoin":
        if (node.joining === undefined && node.tob.phase === "crashed") startJoining(node, nowUs)
        return
    }
  }

  // The scenario's schedule of events.
  for (const id of members) queue.push(rng.int(0, 2000), { to: id, ev: { _tag: "Boot" } })
  for (const id of plan.spares) startJoining(nodes.get(id)!, 0)
  for (const [id, f] of plan.faults) {
    if (f.crashAtUs !== undefined) queue.push(f.crashAtUs, { to: id, ev: { _tag: "Kill" } })
    // A process with omissions may look disconnected to some peers while they last.
    if (f.omitUntilUs > f.omitFromUs) {
      for (const p of ids) {
        if (p !== id && rng.chance(0.5)) {
          queue.push(rng.int(f.omitFromUs, f.omitUntilUs), { to: p, ev: { _tag: "Gone", process: id } })
        }
      }
    }
  }
  // Where only safety is checked, the transport is wrong too: live, connected processes reported gone.
  if (plan.safetyOnly) {
    for (let i = rng.int(0, 3 * n); i > 0; i--) {
      const [to, about] = rng.sample(members, 2)
      queue.push(rng.int(0, plan.endUs), { to: to!, ev: { _tag: "Gone", process: about! } })
    }
  }
  const load = rng.int(n, 4 * n)
  for (let i = 0; i < load; i++) {
    const payload = rng.bytes(rng.int(1, 120))
    queue.push(rng.int(0, plan.loadEndUs), {
      to: CLIENT,
      ev: { _tag: "Client", input: { _tag: "Broadcast", payload } }
    })
  }
  if (!plan.safetyOnly) queue.push(plan.quietFromUs, { to: CLIENT, ev: { _tag: "Probe" } })
  if (plan.change !== undefined) {
    const input = { _tag: "ProposeMembership", members: plan.change.members } as const
    queue.push(plan.change.atUs, { to: CLIENT, ev: { _tag: "Client", input } })
  }

  for (let next = queue.pop(); next !== undefined && violation === undefined; next = queue.pop()) {
    const { atUs, event } = next
    if (atUs > plan.endUs) break
    if (event.ev._tag === "Probe") {
      if (quiescent()) break
      queue.push(atUs + 2 * P, event)
      continue
    }
    if (event.ev._tag === "Client") {
      const target = clientTarget()
      if (target !== undefined) feed(target, event.ev.input, atUs)
      continue
    }
    const node = nodes.get(event.to)!
    if (node.left || (node.down && event.ev._tag !== "Restart")) continue
    trace.add(atUs, node.id, event.ev)
    handle(node, event.ev, atUs)
  }

  if (violation === undefined && !plan.safetyOnly)
    violation = checkLiveness([...nodes.values()], checker, plan, maxInstance)
  return {
    scenario,
    seed,
    n,
    f: [...plan.faults.values()].filter(isFaulty).length,
    violation,
    trace: violation === undefined ? [] : trace.snapshot(),
    stats: {
      decisions: checker.decisions.decisions,
      maxDecisionRound: checker.maxDecisionRound,
      messages: network.sent,
      droppedMessages: network.dropped,
      selfCrashes,
      instances: maxInstance,
      deliveries: checker.deliveries,
      rejoins,
      learnerRejoins
    }
  }
}

/**
 * End-of-run liveness of a synchronous run whose faults have stopped: every replica that is up and still a
 * member is running again (rejoin works), the group kept deciding, and TOB validity holds.
 */
const checkLiveness = (
  nodes: ReadonlyArray<Node>,
  checker: TobChecker,
  plan: TobPlan,
  maxInstance: number
): Violation | undefined => {
  if (maxInstance < 5) return { property: "progress", detail: `only ${maxInstance} instances started` }
  const finalMembers = (() => {
    const last = nodes.find((x) => x.tob.multi?.current.instance === maxInstance)
    return last === undefined ? [] : membersAt(scheduleOf(last.tob), maxInstance)
  })()
  if (plan.change !== undefined && finalMembers.join(",") !== [...plan.change.members].sort().join(",")) {
    return {
      property: "membership change",
      detail: `members at ${maxInstance} are {${finalMembers}}, not {${plan.change.members}}`
    }
  }
  const running: Array<ProcessId> = []
  for (const node of nodes) {
    if (node.down || node.left || !finalMembers.includes(node.id)) continue
    if (node.joining !== undefined || node.tob.phase !== "running") {
      return { property: "rejoin", detail: `${node.id} is up but not running at the end (phase ${node.tob.phase})` }
    }
    running.push(node.id)
  }
  return checker.checkValidity(running, plan.validityBeforeUs)
}
