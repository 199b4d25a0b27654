/**
 * Learner mode: what a process does between a self-quit and taking part again. The paper lets a process
 * that self-quit "asynchronously ask for missing values (i.e., state transfer) and start reproposing once it
 * has caught up". Asking a peer's host is slow compared with a round; but a process that self-quit is still a
 * member, so it keeps receiving every round-1 message, and round 1 of instance c+1 carries the ids of the
 * sender's decision of c (the decision relay, popuc-multi.ts). A learner therefore collects the values of
 * round-1 messages and, once a relayed decision names only values it holds, delivers that decision; when it
 * has delivered every instance before the one whose round-1 messages are arriving now, it opens that instance
 * on time and proposes again. When it misses a value, it stays a learner and the shell's state transfer
 * (`Join`) takes over. Pure data in, data out, like the rest of the core.
 */
import type { InstanceState } from "./popuc-instance.js"
import type { StashedMsg } from "./popuc-multi.js"
import type { ProcessId, RoundMsg, Value } from "./types.js"
import { valueKey } from "./value.js"

/** Instances past the next undelivered one whose values are kept (a learner further behind cannot recover). */
export const LEARN_AHEAD = 2

export interface LearnerState {
  /** Values heard, per instance from the next undelivered one on. */
  readonly values: ReadonlyMap<number, ReadonlyMap<string, Value>>
  /** The round-1 messages of the newest instance heard, replayed when the learner opens it. */
  readonly newest: { readonly instance: number; readonly msgs: ReadonlyArray<StashedMsg> }
}

/** At a self-quit: everything the process heard in the instance it quit (round-1 messages follow). */
export const startLearning = (current: InstanceState): LearnerState => ({
  values: new Map([[current.instance, current.values]]),
  newest: { instance: current.instance, msgs: [] }
})

/** Records a round-1 message (values and, for the newest instance, the message itself). */
export const hearRound1 = (
  l: LearnerState,
  from: ProcessId,
  msg: RoundMsg,
  nextDeliverInstance: number
): LearnerState => {
  if (msg.round !== 1 || msg.instance < nextDeliverInstance || msg.instance > nextDeliverInstance + LEARN_AHEAD) {
    return l
  }
  const known = new Map(l.values.get(msg.instance) ?? [])
  for (const v of msg.values) known.set(valueKey(v), v)
  const values = new Map(l.values).set(msg.instance, known)
  const newest =
    msg.instance > l.newest.instance
      ? { instance: msg.instance, msgs: [{ from, msg }] }
      : msg.instance === l.newest.instance
        ? { instance: msg.instance, msgs: [...l.newest.msgs, { from, msg }] }
        : l.newest
  return { values, newest }
}

/**
 * The decision of `nextDeliverInstance` that `msg` (a round-1 message of the instance after it) relays, when
 * every value it names is known here; otherwise undefined.
 */
export const relayedDecision = (
  l: LearnerState,
  msg: RoundMsg,
  nextDeliverInstance: number
): ReadonlyArray<Value> | undefined => {
  if (msg.round !== 1 || msg.instance !== nextDeliverInstance + 1 || msg.decided.length === 0) return undefined
  const known = l.values.get(nextDeliverInstance)
  if (known === undefined) return undefined
  const decision: Array<Value> = []
  for (const ref of msg.decided) {
    const value = known.get(valueKey(ref))
    if (value === undefined) return undefined
    decision.push(value)
  }
  return decision
}

/** Forgets the values of instances now delivered. */
export const afterDelivery = (l: LearnerState, nextDeliverInstance: number): LearnerState => ({
  values: new Map([...l.values].filter(([instance]) => instance >= nextDeliverInstance)),
  newest: l.newest
})
