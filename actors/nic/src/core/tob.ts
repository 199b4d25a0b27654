/**
 * Total-order broadcast on back-to-back POPUC instances (the paper's Alg. 4, "ckctob"), as a pure step.
 *
 * - `Broadcast` adds a value to `pending`; the first one starts the group with sync-start (Alg. 3).
 * - Each instance proposes everything pending as one value set, bounded by `maxBatchBytes`, without waiting
 *   for a batch to fill ("name instances do not wait for L values, but rather propose them as they arrive");
 *   a heartbeat □ when nothing is pending, so an idle replica is not suspected.
 * - A decided set is delivered in canonical order (proposer id, then seq), heartbeats filtered out, each value
 *   at most once: "forall v ∈ V_i | v ≠ □: if v ∉ delivered then deliver(v)". Values proposed but not decided
 *   (their proposer was excluded) stay pending and are proposed again.
 * - A process that crashed (excluded, or fell behind) keeps its pending values and its delivery cursor; the
 *   shell fetches the decisions it missed from a peer and feeds `Join` with an agreed start instance.
 *
 * Deviation: Alg. 4 proposes `next(pending)`, one value per instance; proposing the whole pending set (bounded
 * in bytes) is what §5.2 describes for the hardware and what the brief asks for.
 */
import { type DeliveredIndex, emptyDeliveredIndex, isDelivered, markDelivered } from "./delivered-index.js"
import { afterDelivery, hearRound1, type LearnerState, relayedDecision, startLearning } from "./learner.js"
import {
  DEFAULT_MEMBERSHIP_DELAY,
  initialSchedule,
  type MembershipSchedule,
  membersAt,
  scheduleAfterDecision
} from "./membership.js"
import { attemptOf, type StepInstance } from "./popuc-instance.js"
import {
  createMulti,
  type MultiOutput,
  type MultiState,
  type ProposalSource,
  type StashedMsg,
  stepMulti
} from "./popuc-multi.js"
import { closesOnAllHeard, type RoundTimerConfig } from "./round-timer.js"
import {
  createSyncStart,
  type SyncStartMsg,
  type SyncStartState,
  type SyncStartStep,
  stepSyncStart
} from "./sync-start.js"
import type { Incarnation, ProcessId, RoundMsg, Step, Value } from "./types.js"
import { clientValue, heartbeatValue, membershipValue, sortValues, valueKey, valueSizeBytes } from "./value.js"

export interface TobParams {
  readonly self: ProcessId
  /** This process start (types.ts): every value it proposes carries it. */
  readonly incarnation: Incarnation
  /** Π: the members of instance 1. */
  readonly members: ReadonlyArray<ProcessId>
  readonly roundTimer: RoundTimerConfig
  /** Upper bound on the encoded size of one proposal (at least one value is always proposed). */
  readonly maxBatchBytes: number
  /** Bound on `pending`; a broadcast beyond it is rejected (back-pressure to the client). */
  readonly maxPending?: number
  readonly membershipDelay?: number
  /** Test seam for the simulator's mutation tests. */
  readonly stepInstance?: StepInstance
}

export const DEFAULT_MAX_PENDING = 10_000

/**
 * `idle`: before the first instance (until sync-start begins it or the shell `Join`s a running group);
 * `crashed`: excluded or behind, waiting for the shell to `Join`.
 */
export type TobPhase = "idle" | "running" | "crashed" | "left"

export interface TobState {
  readonly params: TobParams
  readonly phase: TobPhase
  readonly syncStart: SyncStartState
  readonly multi: MultiState | undefined
  /** The bootstrap schedule, used until a multi-instance core exists. */
  readonly initialSchedule: MembershipSchedule
  /** This process's broadcast values not delivered yet, in seq order. */
  readonly pending: ReadonlyArray<Value>
  /** Seq of the next value this process broadcasts; seqs start at 0 and never repeat. */
  readonly nextSeq: number
  /** Every decision before this instance has been delivered. */
  readonly nextDeliverInstance: number
  readonly delivered: DeliveredIndex
  /** While crashed: what it learns from round-1 messages to take part again (learner.ts). */
  readonly learner: LearnerState | undefined
  /** The attempt of an instance this process self-quit last: it never takes part in it again (popuc-multi.ts). */
  readonly quit: QuitRecord | undefined
}

export interface QuitRecord {
  readonly instance: number
  readonly attempt: number
  /** It had opened round 1 (sent its proposal): a Join may not open this attempt again. */
  readonly entered: boolean
}

/** Taking part in `attempt` of `instance` would be taking part again in the attempt `quit` records. */
export const takesPartAgain = (quit: QuitRecord | undefined, instance: number, attempt: number): boolean =>
  quit?.entered === true && quit.instance === instance && attempt <= quit.attempt

export type WireMsg = RoundMsg | SyncStartMsg

export interface DecidedInstance {
  readonly instance: number
  readonly values: ReadonlyArray<Value>
}

export type TobInput =
  | { readonly _tag: "Broadcast"; readonly payload: Uint8Array }
  | { readonly _tag: "ProposeMembership"; readonly members: ReadonlyArray<ProcessId> }
  /** Start the group without a value (Alg. 4 starts it on the first broadcast). */
  | { readonly _tag: "SyncStart" }
  | { readonly _tag: "Receive"; readonly from: ProcessId; readonly msg: WireMsg }
  | { readonly _tag: "RoundTimeout"; readonly instance: number; readonly round: number }
  /** The perfect failure detector P of sync-start reports `process` crashed. */
  | { readonly _tag: "Failure"; readonly process: ProcessId }
  /**
   * The transport reports that `process` has no connection now (the engine shell asks the server, see
   * engine-loop.ts). Unlike `Failure` it may be wrong; it only stops rounds waiting for `process`
   * (popuc-instance.ts, "Gone"). Ignored unless running.
   */
  | { readonly _tag: "Gone"; readonly process: ProcessId }
  /**
   * (Re)join at `startInstance` after a crash or as a new member: `decisions` holds every decision from
   * this process's `nextDeliverInstance` (or from `snapshot.instance`) up to `startInstance - 1` (state
   * transfer from a peer), and `schedule` the memberships from `startInstance` on.
   */
  | {
      readonly _tag: "Join"
      readonly startInstance: number
      readonly decisions: ReadonlyArray<DecidedInstance>
      readonly schedule: MembershipSchedule
      /**
       * Open round 1 of `startInstance` now instead of waiting for a peer's round-1 message. A real shell's
       * catch-up arrives after the group began that instance (the peers' round-1 messages came first): it
       * replays them and starts at once so its own round-1 message still lands within the round.
       */
      readonly startNow?: boolean
      /**
       * The attempt at `startInstance` the group is in (default 0); a higher one seen before this process
       * opens the instance is adopted. Never one this process self-quit (`quit`): the core refuses that Join.
       */
      readonly attempt?: number
      /**
       * The host installed a peer's state snapshot that reflects every decision before `instance`: those are
       * not delivered here, and `delivered` (the peer's index at that point) replaces this process's, so a
       * value decided in a skipped instance is still never delivered twice.
       */
      readonly snapshot?: JoinSnapshot
    }

export interface JoinSnapshot {
  readonly instance: number
  readonly delivered: DeliveredIndex
}

export type TobOutput =
  | { readonly _tag: "Send"; readonly to: ReadonlyArray<ProcessId>; readonly msg: WireMsg }
  | Exclude<MultiOutput, { readonly _tag: "Send" }>
  /** A broadcast was accepted into `pending` with this identity. */
  | { readonly _tag: "Queued"; readonly value: Value }
  | { readonly _tag: "Rejected"; readonly reason: string }
  | { readonly _tag: "Deliver"; readonly instance: number; readonly value: Value }
  /** A learner delivered `instance` from a relayed decision (its Deliver outputs follow). */
  | { readonly _tag: "Learned"; readonly instance: number; readonly decidedSetSize: number }
  /** A learner caught up and opened `instance`: it takes part again without a state transfer. */
  | { readonly _tag: "Rejoined"; readonly instance: number }

export type TobStep = Step<TobState, TobOutput>

export const createTob = (params: TobParams): TobState => ({
  params,
  phase: "idle",
  syncStart: createSyncStart(params.self, params.members),
  multi: undefined,
  initialSchedule: initialSchedule(params.members),
  pending: [],
  nextSeq: 0,
  nextDeliverInstance: 1,
  delivered: emptyDeliveredIndex,
  learner: undefined,
  quit: undefined
})

/** The memberships this process knows, e.g. to hand to a joining peer. */
export const scheduleOf = (s: TobState): MembershipSchedule => s.multi?.schedule ?? s.initialSchedule

/** Everything pending, bounded in bytes, or □ when nothing is pending. */
export const selectBatch = (
  params: Pick<TobParams, "self" | "incarnation" | "maxBatchBytes">,
  pending: ReadonlyArray<Value>,
  instance: number
): ReadonlyArray<Value> => {
  const { maxBatchBytes } = params
  if (pending.length === 0) return [heartbeatValue(params.self, params.incarnation, instance)]
  const batch: Array<Value> = []
  let bytes = 0
  for (const v of pending) {
    const size = valueSizeBytes(v)
    if (batch.length > 0 && bytes + size > maxBatchBytes) break
    batch.push(v)
    bytes += size
  }
  return batch
}

const proposalSource =
  (s: TobState): ProposalSource =>
  (instance, decided) => {
    const decidedKeys = new Set(decided.map(valueKey))
    const pending = s.pending.filter((v) => !decidedKeys.has(valueKey(v)))
    return selectBatch(s.params, pending, instance)
  }

const deliver = (s: TobState, decision: DecidedInstance): TobStep => {
  if (decision.instance < s.nextDeliverInstance) return { state: s, out: [] }
  if (decision.instance > s.nextDeliverInstance) {
    throw new Error(`tob: decision of ${decision.instance} before ${s.nextDeliverInstance} was delivered`)
  }
  let delivered = s.delivered
  const out: Array<TobOutput> = []
  for (const value of sortValues(decision.values)) {
    if (value.kind === "heartbeat" || isDelivered(delivered, value)) continue
    delivered = markDelivered(delivered, value)
    out.push({ _tag: "Deliver", instance: decision.instance, value })
  }
  const pending = out.length === 0 ? s.pending : s.pending.filter((v) => !isDelivered(delivered, v))
  return { state: { ...s, delivered, pending, nextDeliverInstance: decision.instance + 1 }, out }
}

/** `s` with a new multi-instance core, built in one fixed field order (per-message hot path). */
const withMulti = (s: TobState, multi: MultiState): TobState => ({
  params: s.params,
  phase: s.phase,
  syncStart: s.syncStart,
  multi,
  initialSchedule: s.initialSchedule,
  pending: s.pending,
  nextSeq: s.nextSeq,
  nextDeliverInstance: s.nextDeliverInstance,
  delivered: s.delivered,
  learner: s.learner,
  quit: s.quit
})

/** Runs the multi-instance core and turns its outputs into TOB work: deliveries, phase changes. */
const runMulti = (s: TobState, multi: MultiState, step: (m: MultiState) => Step<MultiState, MultiOutput>): TobStep => {
  const result = step(multi)
  let state = withMulti(s, result.state)
  const out: Array<TobOutput> = []
  for (const o of result.out) {
    out.push(o)
    if (o._tag === "Decide") {
      const delivered = deliver(state, o)
      state = delivered.state
      out.push(...delivered.out)
    } else if (o._tag === "Crash") {
      const { instance, attempt, round } = result.state.current
      state = {
        ...state,
        phase: "crashed",
        learner: startLearning(result.state.current),
        quit: { instance, attempt, entered: round > 0 }
      }
    } else if (o._tag === "Left") {
      state = { ...state, phase: "left" }
    }
  }
  return { state, out }
}

const newMulti = (s: TobState, startInstance: number, schedule: MembershipSchedule, startAttempt = 0): MultiState =>
  createMulti({
    self: s.params.self,
    roundTimer: s.params.roundTimer,
    startInstance,
    startAttempt,
    schedule,
    proposal: selectBatch(s.params, s.pending, startInstance),
    membershipDelay: s.params.membershipDelay ?? DEFAULT_MEMBERSHIP_DELAY,
    ...(s.params.stepInstance === undefined ? {} : { stepInstance: s.params.stepInstance })
  })

/** Opens instance 1: on sync-start's `Begin`, or on a round-1 message that arrived before it. */
const beginFirstInstance = (s: TobState): TobState => ({
  ...s,
  phase: "running",
  syncStart: { ...s.syncStart, begun: true },
  multi: newMulti(s, 1, s.initialSchedule)
})

const runSyncStart = (s: TobState, step: SyncStartStep): TobStep => {
  let state: TobState = { ...s, syncStart: step.state }
  const out: Array<TobOutput> = []
  for (const o of step.out) {
    if (o._tag === "Send") {
      out.push(o)
    } else if (state.phase === "idle" && isInitialMember(state)) {
      state = beginFirstInstance(state)
      const started = runMulti(state, state.multi!, (m) => stepMulti(m, { _tag: "Start" }, proposalSource(state)))
      state = started.state
      out.push(...started.out)
    }
  }
  return { state, out }
}

const enqueue = (s: TobState, value: Value): TobStep => {
  if (s.phase === "left") return { state: s, out: [{ _tag: "Rejected", reason: "this process left the group" }] }
  if (s.pending.length >= (s.params.maxPending ?? DEFAULT_MAX_PENDING)) {
    return { state: s, out: [{ _tag: "Rejected", reason: "pending buffer full" }] }
  }
  const state = { ...s, pending: [...s.pending, value], nextSeq: s.nextSeq + 1 }
  const queued: TobOutput = { _tag: "Queued", value }
  if (state.phase === "running" && state.multi?.opening !== undefined && closesOnAllHeard(s.params.roundTimer)) {
    // Waiting out an idle gap: there is something to propose now (popuc-multi.ts).
    const opened = runMulti(state, state.multi, (m) => stepMulti(m, { _tag: "Open" }, proposalSource(state)))
    return { state: opened.state, out: [queued, ...opened.out] }
  }
  if (state.phase !== "idle" || state.syncStart.triggered) return { state, out: [queued] }
  const started = runSyncStart(state, stepSyncStart(state.syncStart, { _tag: "Trigger" }))
  return { state: started.state, out: [queued, ...started.out] }
}

const isInitialMember = (s: TobState): boolean => s.params.members.includes(s.params.self)

const onRoundMsg = (s: TobState, from: ProcessId, msg: RoundMsg): TobStep => {
  if (s.phase === "running") {
    const step = runMulti(s, s.multi!, (m) => stepMulti(m, { _tag: "Receive", from, msg }, proposalSource(s)))
    // Self-quit on this very message: it may already say enough to learn from (e.g. a relayed decision).
    return learnAfterCrash(s, step, [{ from, msg }])
  }
  if (s.phase === "crashed" && s.learner !== undefined) return learnFrom(s, from, msg)
  // A process that is not in Π (a future member) only ever starts through `Join`.
  if (s.phase !== "idle" || !isInitialMember(s)) return { state: s, out: [] }
  if (msg.instance === 1) {
    const state = beginFirstInstance(s)
    return runMulti(state, state.multi!, (m) => stepMulti(m, { _tag: "Receive", from, msg }, proposalSource(state)))
  }
  // A process that is not starting the group (a restarted member whose shell is still asking its peers) just
  // waits for its `Join`: it is a rejoiner from the start, not a member that fell behind.
  if (!s.syncStart.triggered) return { state: s, out: [] }
  const reason = `missed the start: received instance ${msg.instance} before starting`
  return { state: { ...s, phase: "crashed" }, out: [{ _tag: "Crash", instance: 0, reason }] }
}

/** Running an instance it has started (past round 0). */
export const isTakingPart = (s: TobState): boolean =>
  s.phase === "running" && s.multi !== undefined && s.multi.current.round > 0

/**
 * After a step of a running process: when it self-quit, the round-1 messages of the next instance it had
 * stashed, then `heard`, go to the new learner (a stashed one may already relay the decision it missed).
 */
const learnAfterCrash = (before: TobState, step: TobStep, heard: ReadonlyArray<StashedMsg>): TobStep => {
  if (before.phase !== "running" || step.state.phase !== "crashed") return step
  let result = step
  for (const m of [...(before.multi?.stash ?? []), ...heard]) {
    result = chain(result, (c) => (c.phase === "crashed" ? learnFrom(c, m.from, m.msg) : { state: c, out: [] }))
  }
  return result
}

const chain = (first: TobStep, next: (s: TobState) => TobStep): TobStep => {
  const second = next(first.state)
  return { state: second.state, out: [...first.out, ...second.out] }
}

/**
 * A learner hears a round-1 message (learner.ts): it records its values, delivers the decision it relays
 * when every value is known, and once every instance before the message's is delivered, opens that instance
 * and replays the round-1 messages of it heard so far, so its own round-1 message leaves on time.
 */
const learnFrom = (s: TobState, from: ProcessId, msg: RoundMsg): TobStep => {
  if (s.learner === undefined || msg.round !== 1) return { state: s, out: [] }
  const learner = hearRound1(s.learner, from, msg, s.nextDeliverInstance)
  let state: TobState = { ...s, learner }
  const decision = relayedDecision(learner, msg, s.nextDeliverInstance)
  if (decision === undefined) return { state, out: [] }
  const instance = s.nextDeliverInstance
  const out: Array<TobOutput> = [{ _tag: "Learned", instance, decidedSetSize: decision.length }]
  const delivered = deliver(state, { instance, values: decision })
  out.push(...delivered.out)
  const schedule = scheduleAfterDecision(
    scheduleOf(s),
    instance,
    decision,
    s.params.membershipDelay ?? DEFAULT_MEMBERSHIP_DELAY
  )
  const next = instance + 1
  state = { ...delivered.state, learner: afterDelivery(learner, next) }
  if (!membersAt(schedule, next).includes(s.params.self)) {
    return { state: { ...state, phase: "left", learner: undefined }, out: [...out, { _tag: "Left", instance: next }] }
  }
  const replay = learner.newest.instance === next ? learner.newest.msgs : []
  const multi = newMulti(state, next, schedule, Math.max(0, ...replay.map((m) => attemptOf(m.msg))))
  state = { ...state, phase: "running", multi, learner: undefined }
  out.push({ _tag: "Rejoined", instance: next })
  let step = runMulti(state, multi, (m) => stepMulti(m, { _tag: "Start" }, proposalSource(state)))
  out.push(...step.out)
  for (const m of replay) {
    if (step.state.phase !== "running") break
    const current = step.state
    step = runMulti(current, current.multi!, (mm) =>
      stepMulti(mm, { _tag: "Receive", from: m.from, msg: m.msg }, proposalSource(current))
    )
    out.push(...step.out)
  }
  return { state: step.state, out }
}

const onJoin = (s: TobState, input: Extract<TobInput, { _tag: "Join" }>): TobStep => {
  if (s.phase === "left") return { state: s, out: [] }
  // A learner that caught up by itself (learnFrom) already takes part: a state transfer is moot. (A join
  // whose instance is open but not started yet, round 0, may still be started by a second Join.)
  if (isTakingPart(s)) return { state: s, out: [] }
  if (input.startInstance < s.nextDeliverInstance) {
    throw new Error(`tob: join at ${input.startInstance} but ${s.nextDeliverInstance - 1} is already delivered`)
  }
  let state: TobState = s
  if (input.snapshot !== undefined && input.snapshot.instance > s.nextDeliverInstance) {
    if (input.snapshot.instance > input.startInstance) {
      throw new Error(`tob: snapshot at ${input.snapshot.instance} is past the join instance ${input.startInstance}`)
    }
    const delivered = input.snapshot.delivered
    state = {
      ...s,
      delivered,
      pending: s.pending.filter((v) => !isDelivered(delivered, v)),
      nextDeliverInstance: input.snapshot.instance
    }
  }
  const byInstance = new Map(input.decisions.map((d) => [d.instance, d]))
  const out: Array<TobOutput> = []
  for (let i = state.nextDeliverInstance; i < input.startInstance; i++) {
    const d = byInstance.get(i)
    if (d === undefined) throw new Error(`tob: join at ${input.startInstance} is missing the decision of ${i}`)
    const delivered = deliver(state, d)
    state = delivered.state
    out.push(...delivered.out)
  }
  if (!membersAt(input.schedule, input.startInstance).includes(s.params.self)) {
    throw new Error(`tob: ${s.params.self} is not a member of instance ${input.startInstance}`)
  }
  const attempt = input.attempt ?? 0
  if (takesPartAgain(s.quit, input.startInstance, attempt)) {
    throw new Error(
      `tob: join at attempt ${attempt} of instance ${input.startInstance}, which it took part in up to attempt ${s.quit?.attempt}`
    )
  }
  // A restarted process (fresh state, same id) proposes in a new incarnation: its seqs start at 0 again
  // without colliding with the values of its previous life.
  const multi = newMulti(state, input.startInstance, input.schedule, attempt)
  state = {
    ...state,
    phase: "running",
    multi,
    learner: undefined,
    syncStart: { ...state.syncStart, begun: true, triggered: true }
  }
  if (input.startNow === true) {
    const started = runMulti(state, multi, (m) => stepMulti(m, { _tag: "Start" }, proposalSource(state)))
    return { state: started.state, out: [...out, ...started.out] }
  }
  return { state, out }
}

export const stepTob = (s: TobState, input: TobInput): TobStep => {
  switch (input._tag) {
    case "Broadcast":
      return enqueue(s, clientValue(s.params.self, s.params.incarnation, s.nextSeq, input.payload))
    case "ProposeMembership":
      return enqueue(s, membershipValue(s.params.self, s.params.incarnation, s.nextSeq, input.members))
    case "SyncStart":
      if (s.phase !== "idle") return { state: s, out: [] }
      return runSyncStart(s, stepSyncStart(s.syncStart, { _tag: "Trigger" }))
    case "Receive":
      if (input.msg._tag === "Round") return onRoundMsg(s, input.from, input.msg)
      return runSyncStart(s, stepSyncStart(s.syncStart, { _tag: "Receive", from: input.from, msg: input.msg }))
    case "RoundTimeout":
    case "Gone":
      if (s.phase !== "running") return { state: s, out: [] }
      return learnAfterCrash(
        s,
        runMulti(s, s.multi!, (m) => stepMulti(m, input, proposalSource(s))),
        []
      )
    case "Failure":
      return runSyncStart(s, stepSyncStart(s.syncStart, { _tag: "Failure", process: input.process }))
    case "Join":
      return onJoin(s, input)
  }
}
