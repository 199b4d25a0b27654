/**
 * Back-to-back POPUC instances with instance numbers (the paper's "ckcucmi", App. B.1): "Processes proceed
 * with [POPUC] logic only when they receive messages belonging to the current consensus instance, ignore
 * messages from prior instances, and declare themselves faulty through crash when they notice they are a
 * number of instances 'behind'."
 *
 * Deciding instance c starts c+1 in the same step (its round 1 follows round r of c like any round change, so
 * the round timer chain is never broken). A message of c+1 while still in c:
 * - round 1: the sender decided c, so this process is one round behind. The message is stashed (at most one
 *   per sender) for replay once c+1 starts, and c is decided at once if either
 *   (a) closing the current round now decides — the instance-level catch-up that keeps replicas aligned
 *       across instance boundaries, like the round-level one inside an instance; or
 *   (b) decision relay: the message carries the ids of the sender's decision of c and all those values are
 *       known here, so that set is decided (uniform agreement makes it the only possible decision).
 *   Otherwise the round runs to its timer: closing it early would only add suspicions of peers whose messages
 *   of this round are still in flight.
 * - a later round: too early, dropped (an omission, like any message more than one round ahead).
 * A message of c+2 or later means this process fell more than one instance behind: it crashes, and the shell
 * rejoins it at an agreed instance (`createMulti` with `startInstance`, after fetching the decisions it missed).
 *
 * Why (b): correct replicas can decide c one round apart (asymmetric omissions by a faulty peer). The early
 * ones open c+1 a round ahead and close its round 1 before the late ones' round-1 messages arrive; if the late
 * ones are a majority, the early ones suspect more than t peers and crash, and with the faulty ones that can
 * stall the whole group (the simulator found it: tob-omission, N = 5, seed 1000375). A late replica is
 * normally locked, so its V already equals the decision and (b) lets it follow at once.
 *
 * Host turnaround (`RoundTimerConfig.instanceGapMs`, 0 by default): with a gap, a decision does not open the
 * next instance in the same step. The process waits `gap` (a `SetTimer` for round 0 of the next instance) and
 * then opens it, proposing what arrived meanwhile, typically the next requests of the clients just answered.
 * A round-1 message of the next instance during the gap means a peer opened it already (its timer fired
 * first): this process opens it at once (a catch-up, like the round-level one) and then takes the message.
 * Every process waits the same gap after a decision reached within the same round, so the instances stay
 * aligned; safety never depends on any of this.
 *
 * With `closeOnAllHeard` (round-timer.ts) rounds last only as long as messages take, and the gap becomes an
 * idle gap: a process with something to propose opens the next instance at once, one with only a heartbeat
 * waits the gap, and `Open` (its host broadcast something) ends the wait early. Busy replicas then pull idle
 * ones along by catch-up, so a value waits for at most the instance already running, and an idle group does
 * not spin heartbeat instances as fast as messages allow.
 *
 * Membership: the members of every instance come from a `MembershipSchedule` updated by decided membership
 * commands (membership.ts). A process that is not a member of the next instance leaves (`Left`).
 *
 * Attempts: POPUC's safety (App. A) holds for any number of crashes, but only if each process sends at most one
 * message per round: a process that self-quit an instance and took part in it again would send a second,
 * different round-1 message, which is an equivocation the proof excludes. So a process never takes part twice
 * in one attempt of an instance (tob.ts refuses such a Join). When every member self-quit (the group
 * collapsed) nobody can decide the instance in that attempt any more, and the group opens it again in a
 * higher attempt (rejoin.ts says when that is safe). Round messages carry their attempt; an instance merges
 * only its own attempt's. A message of a higher attempt of the current instance means the group moved on:
 * an instance not started yet (round 0) adopts that attempt, a started one quits (and its host rejoins it
 * there). Lower attempts are old messages and ignored.
 */
import { DEFAULT_MEMBERSHIP_DELAY, type MembershipSchedule, membersAt, scheduleAfterDecision } from "./membership.js"
import {
  adoptDecision,
  attemptOf,
  closeRound,
  createInstance,
  type InstanceOutput,
  type InstanceState,
  type InstanceStep,
  type StepInstance,
  stepInstance
} from "./popuc-instance.js"
import { closesOnAllHeard, instanceGapMs, type RoundCloseCause, type RoundTimerConfig } from "./round-timer.js"
import type { ProcessId, RoundMsg, Step, Value } from "./types.js"
import { valueRef } from "./value.js"

export interface MultiParams {
  readonly self: ProcessId
  readonly roundTimer: RoundTimerConfig
  /** The first instance this process runs: 1 at bootstrap, the agreed instance on a rejoin. */
  readonly startInstance: number
  /** Members of `startInstance` and any change already decided for later instances. */
  readonly schedule: MembershipSchedule
  /** This process's proposal for `startInstance`. */
  readonly proposal: ReadonlyArray<Value>
  /** The attempt at `startInstance` (default 0; see "Attempts"). */
  readonly startAttempt?: number
  /** Instances between deciding a membership change and its effect (default 2, at least 2). */
  readonly membershipDelay?: number
  /** Test seam: a (deliberately broken) instance step for the simulator's mutation tests. */
  readonly stepInstance?: StepInstance
}

export type MultiStatus = "running" | "crashed" | "left"

export interface StashedMsg {
  readonly from: ProcessId
  readonly msg: RoundMsg
}

export interface MultiState {
  readonly self: ProcessId
  readonly roundTimer: RoundTimerConfig
  readonly membershipDelay: number
  readonly stepInstance: StepInstance
  readonly status: MultiStatus
  readonly current: InstanceState
  readonly schedule: MembershipSchedule
  /** Round-1 messages of the next instance received while still in the current one. */
  readonly stash: ReadonlyArray<StashedMsg>
  /** Messages of instances already left behind, ignored. */
  readonly ignoredOld: number
  /** Decided, waiting out the host-turnaround gap before opening `instance` (see above). */
  readonly opening: Opening | undefined
}

export interface Opening {
  readonly instance: number
  /** The decision just reached (relayed in round 1, left out of the proposal). */
  readonly decided: ReadonlyArray<Value>
}

export type MultiInput =
  | { readonly _tag: "Start" }
  | { readonly _tag: "RoundTimeout"; readonly instance: number; readonly round: number }
  | { readonly _tag: "Receive"; readonly from: ProcessId; readonly msg: RoundMsg }
  /** `closeOnAllHeard`: this process has something to propose now, so an idle gap ends. */
  | { readonly _tag: "Open" }
  /** The transport reports `process` gone (popuc-instance.ts); the report carries over to later instances. */
  | { readonly _tag: "Gone"; readonly process: ProcessId }

export type MultiOutput =
  | Exclude<InstanceOutput, { readonly _tag: "Crash" }>
  | { readonly _tag: "Crash"; readonly instance: number; readonly reason: string }
  /** This process opened round 1 of `attempt` of `instance` with these members. */
  | {
      readonly _tag: "Started"
      readonly instance: number
      readonly attempt: number
      readonly members: ReadonlyArray<ProcessId>
    }
  /** This process is not a member of `instance` and stops. */
  | { readonly _tag: "Left"; readonly instance: number }

export type MultiStep = Step<MultiState, MultiOutput>

/**
 * What to propose in the instance that follows a decision. Called inside the step that decided, with the
 * decided set, so the caller can leave out what was just decided. Must be pure.
 */
export type ProposalSource = (instance: number, decided: ReadonlyArray<Value>) => ReadonlyArray<Value>

export const createMulti = (p: MultiParams): MultiState => {
  const membershipDelay = p.membershipDelay ?? DEFAULT_MEMBERSHIP_DELAY
  if (!Number.isInteger(membershipDelay) || membershipDelay < 2) throw new Error("membershipDelay must be >= 2")
  return {
    self: p.self,
    roundTimer: p.roundTimer,
    membershipDelay,
    stepInstance: p.stepInstance ?? stepInstance,
    status: "running",
    current: createInstance({
      instance: p.startInstance,
      attempt: p.startAttempt ?? 0,
      self: p.self,
      members: membersAt(p.schedule, p.startInstance),
      proposal: p.proposal,
      roundTimer: p.roundTimer
    }),
    schedule: p.schedule,
    stash: [],
    ignoredOld: 0,
    opening: undefined
  }
}

export const currentInstance = (s: MultiState): number => s.current.instance

const none = (state: MultiState): MultiStep => ({ state, out: [] })

/** `s` with a new current instance, built in one fixed field order (per-message hot path, see merge). */
const withCurrent = (s: MultiState, current: InstanceState): MultiState => ({
  self: s.self,
  roundTimer: s.roundTimer,
  membershipDelay: s.membershipDelay,
  stepInstance: s.stepInstance,
  status: s.status,
  current,
  schedule: s.schedule,
  stash: s.stash,
  ignoredOld: s.ignoredOld,
  opening: s.opening
})

/** Applies one instance step, then, if it decided, opens the next instance. */
const absorb = (s: MultiState, step: InstanceStep, cause: RoundCloseCause, propose: ProposalSource): MultiStep => {
  const out: Array<MultiOutput> = []
  const before = s.current
  let state = withCurrent(s, step.state)
  if (before.round === 0 && step.state.round === 1) {
    out.push({ _tag: "Started", instance: before.instance, attempt: before.attempt, members: before.members })
  }
  let decided: ReadonlyArray<Value> | undefined
  for (const o of step.out) {
    if (o._tag === "Crash") {
      state = { ...state, status: "crashed" }
      out.push({ _tag: "Crash", instance: o.instance, reason: o.reason })
    } else {
      if (o._tag === "Decide") decided = o.values
      out.push(o)
    }
  }
  if (decided === undefined) return { state, out }
  const next = openNext(state, decided, cause, propose)
  return { state: next.state, out: [...out, ...next.out] }
}

const openNext = (
  s: MultiState,
  decided: ReadonlyArray<Value>,
  cause: RoundCloseCause,
  propose: ProposalSource
): MultiStep => {
  const instance = s.current.instance + 1
  const schedule = scheduleAfterDecision(s.schedule, s.current.instance, decided, s.membershipDelay)
  const members = membersAt(schedule, instance)
  if (!members.includes(s.self)) {
    return { state: { ...s, schedule, status: "left", stash: [] }, out: [{ _tag: "Left", instance }] }
  }
  const gap = instanceGapMs(s.roundTimer)
  // No gap when a peer opened the next instance already (a stashed round-1 message of it). With timed rounds
  // the gap is taken even with a backlog: opening at once whenever one of N replicas has anything pending
  // (nearly always under load) would pull every peer along by catch-up and bring back the every-other-instance
  // pattern. With rounds closed on all heard an instance is short, so only an idle process waits.
  const proposal = closesOnAllHeard(s.roundTimer) ? propose(instance, decided) : undefined
  const idle = proposal === undefined || proposal.every((v) => v.kind === "heartbeat")
  if (gap > 0 && idle && !s.stash.some((m) => m.msg.instance === instance)) {
    return {
      state: { ...s, schedule, opening: { instance, decided } },
      out: [{ _tag: "SetTimer", instance, round: 0, afterMs: gap }]
    }
  }
  return openInstance(
    { ...s, schedule },
    { instance, decided },
    cause,
    proposal === undefined ? propose : () => proposal
  )
}

/** The attempt to open `instance` in: the highest its peers are known to be in already (see "Attempts"). */
const attemptToOpen = (s: MultiState, instance: number, trigger?: RoundMsg): number => {
  let attempt = trigger === undefined ? 0 : attemptOf(trigger)
  for (const m of s.stash) if (m.msg.instance === instance) attempt = Math.max(attempt, attemptOf(m.msg))
  return attempt
}

/** Opens round 1 of `opening.instance` (members from `s.schedule`), then replays its stashed messages. */
const openInstance = (
  s: MultiState,
  opening: Opening,
  cause: RoundCloseCause,
  propose: ProposalSource,
  trigger?: RoundMsg
): MultiStep => {
  const { instance, decided } = opening
  const previous = s.current
  const created = createInstance({
    instance,
    attempt: attemptToOpen(s, instance, trigger),
    self: s.self,
    members: membersAt(s.schedule, instance),
    proposal: propose(instance, decided),
    roundTimer: s.roundTimer,
    // Timed out on and never heard from: a peer merely not heard yet when a relay decided is not silent.
    silent: previous.members.filter((p) => previous.suspect.has(p) && !previous.heardAny.has(p)),
    gone: [...previous.gone]
  })
  const stash = s.stash.filter((m) => m.msg.instance === instance)
  let state: MultiState = { ...s, current: created, stash: [], opening: undefined }
  const started = absorb(state, s.stepInstance(created, { _tag: "Start", cause }), cause, propose)
  state = started.state
  const refs = decided.map(valueRef)
  const out = started.out.map((o) =>
    o._tag === "Send" && o.msg.instance === instance && o.msg.round === 1
      ? { ...o, msg: { ...o.msg, decided: refs, decidedAttempt: previous.attempt } }
      : o
  )
  for (const m of stash) {
    if (state.status !== "running" || state.current.instance !== instance) break
    const replay = absorb(state, s.stepInstance(state.current, { _tag: "Receive", ...m }), "catchUp", propose)
    state = replay.state
    out.push(...replay.out)
  }
  return { state, out }
}

const onNextInstanceMsg = (s: MultiState, from: ProcessId, msg: RoundMsg, propose: ProposalSource): MultiStep => {
  const instance = s.current.instance + 1
  if (!membersAt(s.schedule, instance).includes(from) || from === s.self) return none(s)
  if (msg.round !== 1) return none({ ...s, current: { ...s.current, dropped: s.current.dropped + 1 } })
  const stash = s.stash.some((m) => m.from === from) ? s.stash : [...s.stash, { from, msg }]
  const state = { ...s, stash }
  // The trial uses the real round change routine: it is pure, so a close that does not decide is just dropped.
  const trial = closeRound(s.current, "catchUp")
  if (trial.out.some((o) => o._tag === "Decide")) return absorb(state, trial, "catchUp", propose)
  const relayed = adoptDecision(s.current, msg.decided, msg.decidedAttempt ?? 0)
  return relayed === undefined ? none(state) : absorb(state, relayed, "catchUp", propose)
}

const onReceive = (s: MultiState, from: ProcessId, msg: RoundMsg, propose: ProposalSource): MultiStep =>
  s.opening === undefined
    ? onReceiveInInstance(s, from, msg, propose)
    : onReceiveInGap(s, s.opening, from, msg, propose)

const onReceiveInInstance = (s: MultiState, from: ProcessId, msg: RoundMsg, propose: ProposalSource): MultiStep => {
  const c = s.current.instance
  if (msg.instance < c) return none({ ...s, ignoredOld: s.ignoredOld + 1 })
  if (msg.instance === c) {
    const attempt = attemptOf(msg)
    if (attempt < s.current.attempt) return none({ ...s, ignoredOld: s.ignoredOld + 1 })
    if (attempt > s.current.attempt) return superseded(s, from, attempt, propose, msg)
    return absorb(s, s.stepInstance(s.current, { _tag: "Receive", from, msg }), "catchUp", propose)
  }
  if (msg.instance === c + 1) return onNextInstanceMsg(s, from, msg, propose)
  return behind(s, c, from, msg)
}

/** Between a decision and opening the next instance (the host-turnaround gap). */
const onReceiveInGap = (
  s: MultiState,
  opening: Opening,
  from: ProcessId,
  msg: RoundMsg,
  propose: ProposalSource
): MultiStep => {
  if (msg.instance < opening.instance) return none({ ...s, ignoredOld: s.ignoredOld + 1 })
  if (msg.instance > opening.instance) return behind(s, opening.instance, from, msg)
  if (from === s.self || !membersAt(s.schedule, msg.instance).includes(from)) return none(s)
  // Later rounds of the next instance are too early (an omission, like any message more than a round ahead).
  if (msg.round !== 1) return none(s)
  // A peer opened the next instance already: open it now (catch-up) and take its message there.
  const opened = openInstance(s, opening, "catchUp", propose, msg)
  if (opened.state.status !== "running") return opened
  const received = onReceiveInInstance(opened.state, from, msg, propose)
  return { state: received.state, out: [...opened.out, ...received.out] }
}

/**
 * A message of a higher attempt of the current instance (see "Attempts"): not started yet, the instance
 * adopts it; started, this process quits the attempt it took part in.
 */
const superseded = (
  s: MultiState,
  from: ProcessId,
  attempt: number,
  propose: ProposalSource,
  msg: RoundMsg
): MultiStep => {
  const c = s.current
  if (!c.members.includes(from) || from === s.self) return none(s)
  if (c.round === 0) {
    const adopted = withCurrent(s, { ...c, attempt })
    return absorb(adopted, s.stepInstance(adopted.current, { _tag: "Receive", from, msg }), "catchUp", propose)
  }
  const reason = `superseded: ${from} is in attempt ${attempt} of instance ${c.instance}, this process in ${c.attempt}`
  return { state: { ...s, status: "crashed", stash: [] }, out: [{ _tag: "Crash", instance: c.instance, reason }] }
}

/** A message of an instance past the next one: this process fell more than one instance behind. */
const behind = (s: MultiState, c: number, from: ProcessId, msg: RoundMsg): MultiStep => {
  if (!membersAt(s.schedule, c).includes(from)) return none(s)
  const reason = `behind: received instance ${msg.instance} from ${from} while in instance ${c}`
  return { state: { ...s, status: "crashed", stash: [] }, out: [{ _tag: "Crash", instance: c, reason }] }
}

export const stepMulti = (s: MultiState, input: MultiInput, propose: ProposalSource): MultiStep => {
  if (s.status !== "running") return none(s)
  switch (input._tag) {
    case "Start":
      return absorb(s, s.stepInstance(s.current, { _tag: "Start" }), "timeout", propose)
    case "RoundTimeout":
      if (s.opening !== undefined && input.instance === s.opening.instance && input.round === 0) {
        return openInstance(s, s.opening, "timeout", propose)
      }
      if (input.instance !== s.current.instance) return none(s)
      return absorb(s, s.stepInstance(s.current, { _tag: "RoundTimeout", round: input.round }), "timeout", propose)
    case "Receive":
      return onReceive(s, input.from, input.msg, propose)
    case "Open":
      return s.opening !== undefined && closesOnAllHeard(s.roundTimer)
        ? openInstance(s, s.opening, "timeout", propose)
        : none(s)
    case "Gone":
      // In the gap the decided instance just keeps the report for the next one.
      return s.opening === undefined
        ? absorb(s, s.stepInstance(s.current, input), "allHeard", propose)
        : none(withCurrent(s, s.stepInstance(s.current, input).state))
  }
}
