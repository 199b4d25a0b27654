/**
 * Deliberately broken POPUC steps. The simulator must catch each of them; if it ever stops doing so, the
 * checker has gone blind (a checker that cannot fail proves nothing).
 */
import {
  closeRound,
  type InstanceState,
  type InstanceStep,
  type StepInstance,
  stepInstance
} from "../core/popuc-instance.js"
import { type RejoinInput, type RejoinState, type RejoinStep, stepRejoin } from "../core/rejoin.js"
import { stepTob, type TobInput, type TobState, type TobStep } from "../core/tob.js"
import type { ProcessId, Value } from "../core/types.js"
import { sortValues, valueKey } from "../core/value.js"
import { type CompactRound, type Resolution, resolveRound } from "../core/value-refs.js"
import type { OnTimerExpiry } from "../engine-timers.js"

const decided = (s: InstanceState, round: number): InstanceStep => ({
  state: { ...s, status: "decided" },
  out: [
    {
      _tag: "Decide",
      instance: s.instance,
      round,
      values: sortValues(s.values.values()),
      suspects: [...s.suspect].sort()
    }
  ]
})

/** True when `input` makes `s` run its round change routine for round `s.round`. */
const closesRound = (s: InstanceState, input: Parameters<StepInstance>[1]): boolean =>
  s.status === "running" &&
  ((input._tag === "RoundTimeout" && input.round === s.round) ||
    (input._tag === "Receive" && input.msg.instance === s.instance && input.msg.round === s.round + 1))

/** Decides whatever it has at the end of round 1, skipping the lock/majority logic. */
export const decideAtRoundOne: StepInstance = (s, input) =>
  s.round === 1 && closesRound(s, input) ? decided(s, 1) : stepInstance(s, input)

/**
 * Checks |locked| > t right after locking itself (the order of the README's reconstruction), instead of only
 * when it was locked in an earlier round (App. A, Lemma A.6). It then decides and goes silent while peers do
 * not list it as locked yet: they suspect it, and a correct peer can reach t+1 suspicions and crash.
 */
export const earlyDecisionOnFirstLock: StepInstance = (s, input) => {
  if (!closesRound(s, input) || s.locked.has(s.self)) return stepInstance(s, input)
  const closed = closeRound(s, input._tag === "Receive" ? "catchUp" : "timeout")
  const justLocked = closed.state.status === "running" && closed.state.locked.has(s.self)
  return justLocked && closed.state.locked.size > s.t ? decided(s, s.round) : stepInstance(s, input)
}

/** Merges late messages instead of discarding them: "which would otherwise lead to inconsistent decisions". */
export const acceptLateMessages: StepInstance = (s, input) => {
  if (s.status !== "running" || input._tag !== "Receive" || input.msg.instance !== s.instance) {
    return stepInstance(s, input)
  }
  if (input.msg.round >= s.round) return stepInstance(s, input)
  const values = new Map<string, Value>(s.values)
  for (const v of input.msg.values) values.set(valueKey(v), v)
  return { state: { ...s, values }, out: [] }
}

/** A TOB step that delivers each decided set in reverse order at one process: breaks uniform total order. */
export const reverseDeliveryAt =
  (victim: ProcessId) =>
  (s: TobState, input: TobInput): TobStep => {
    const r = stepTob(s, input)
    if (s.params.self !== victim) return r
    const deliveries = r.out.filter((o) => o._tag === "Deliver")
    const others = r.out.filter((o) => o._tag !== "Deliver")
    return { ...r, out: [...others, ...deliveries.reverse()] }
  }

/** A TOB step that forgets the decisions fetched on a rejoin: its log then skips instances. */
export const skipFetchedDecisions = (s: TobState, input: TobInput): TobStep =>
  input._tag === "Join"
    ? stepTob(s, { ...input, decisions: input.decisions.map((d) => ({ ...d, values: [] })) })
    : stepTob(s, input)

/**
 * Resolves a round message's references to the bodies it holds and drops the rest (core/value-refs.ts): a
 * process that missed a proposer's round-1 message then merges its peers' round-2 messages without that
 * value, breaking "V_j[r-1] ⊆ V_i[r]" (App. A, Observation A.3), and can lock and decide a smaller set.
 */
export const dropUnresolvedRefs = (msg: CompactRound, lookup: (key: string) => Value | undefined): Resolution => {
  const resolved = resolveRound(msg, lookup)
  if (resolved._tag === "Resolved") return resolved
  const missing = new Set(resolved.refs.map(valueKey))
  const known = msg.refs.filter((r) => !missing.has(valueKey(r)))
  return resolveRound({ ...msg, refs: known }, lookup)
}

/** An engine loop without the stall grace: a round timer that fires late closes its round at once. */
export const noStallGrace: OnTimerExpiry = () => "close"

/** Serves as soon as it tells the engine to join, before the decisions it joins with are applied. */
export const serveOnJoin = (s: RejoinState, input: RejoinInput): RejoinStep => {
  const r = stepRejoin(s, input)
  if (r.state.serving || !r.out.some((o) => o._tag === "Join")) return r
  return { state: { ...r.state, serving: true }, out: [...r.out, { _tag: "Serve" }] }
}

/**
 * In a collapsed group, every member waits for the restart leader's round-1 message: nobody opens (and each
 * says so when asked, as a follower would).
 */
export const collapseWithoutLeader = (s: RejoinState, input: RejoinInput): RejoinStep => {
  const r = stepRejoin(s, input)
  if (!r.out.some((o) => o._tag === "Join" && o.collapsed)) return r
  const out = r.out.map((o) => (o._tag === "Join" ? { ...o, startNow: false } : o))
  const phase = r.state.phase._tag === "Joined" ? { ...r.state.phase, takingPart: false } : r.state.phase
  return { state: { ...r.state, phase, started: s.started }, out }
}

/**
 * Takes part again in the very attempt it self-quit (host and engine both forget the quit): a second,
 * different round-1 message of one attempt, the equivocation POPUC's proof excludes.
 */
export const reenterQuitAttempt: Mutant = {
  stepRejoin: (s, input) => stepRejoin({ ...s, quit: undefined }, input),
  stepTob: (s, input) => stepTob(input._tag === "Join" ? { ...s, quit: undefined } : s, input)
}

export interface Mutant {
  readonly stepInstance?: StepInstance
  readonly stepTob?: (s: TobState, input: TobInput) => TobStep
  /** The engine loop's timer policy (engine-timers.ts); only the shell-* scenarios run the loop. */
  readonly onTimerExpiry?: OnTimerExpiry
  /** The engine loop's resolution of round messages' references (round-resolver.ts); shell-* scenarios only. */
  readonly resolveRound?: typeof dropUnresolvedRefs
  /** The rejoin core (core/rejoin.ts); only the shell-* scenarios run it. */
  readonly stepRejoin?: (s: RejoinState, input: RejoinInput) => RejoinStep
}

/** By name, for `pnpm sim popuc --mutant <name>`: shows what a caught violation looks like. */
export const MUTANTS: ReadonlyMap<string, Mutant> = new Map<string, Mutant>([
  ["decide-at-round-1", { stepInstance: decideAtRoundOne }],
  ["early-decision-on-first-lock", { stepInstance: earlyDecisionOnFirstLock }],
  ["accept-late-messages", { stepInstance: acceptLateMessages }],
  ["reverse-delivery-at-p1", { stepTob: reverseDeliveryAt("p1") }],
  ["skip-fetched-decisions", { stepTob: skipFetchedDecisions }],
  ["no-stall-grace", { onTimerExpiry: noStallGrace }],
  ["serve-on-join", { stepRejoin: serveOnJoin }],
  ["collapse-without-leader", { stepRejoin: collapseWithoutLeader }],
  ["reenter-quit-attempt", reenterQuitAttempt],
  ["drop-unresolved-refs", { resolveRound: dropUnresolvedRefs }]
])
