/**
 * The member list of each instance, changed only by `membership` values decided through consensus.
 *
 * A change decided in instance k takes effect at instance k + delay, with delay >= 2, at every process alike
 * (uniform agreement makes the decided set, hence the schedule, identical). Why at least 2: a process in
 * instance k can already receive round-1 messages of k+1 and must check their sender against the members of
 * k+1 before it has decided k; with delay >= 2 those members depend only on decisions it already has.
 */
import type { ProcessId, Value } from "./types.js"
import { sortIds, sortValues } from "./value.js"

export interface MembershipEpoch {
  readonly fromInstance: number
  readonly members: ReadonlyArray<ProcessId>
}

/** Epochs in ascending `fromInstance`; the first covers every instance the holder still runs. */
export interface MembershipSchedule {
  readonly epochs: ReadonlyArray<MembershipEpoch>
}

export const DEFAULT_MEMBERSHIP_DELAY = 2

/** N = 2t+1 distinct, non-empty ids: anything else is ignored when decided, identically everywhere. */
export const isValidMembers = (members: ReadonlyArray<ProcessId>): boolean =>
  members.length % 2 === 1 && new Set(members).size === members.length && members.every((m) => m.length > 0)

export const initialSchedule = (members: ReadonlyArray<ProcessId>, fromInstance = 1): MembershipSchedule => {
  if (!isValidMembers(members)) throw new Error(`membership: need an odd number of distinct ids, got [${members}]`)
  return { epochs: [{ fromInstance, members: sortIds(members) }] }
}

export const membersAt = (s: MembershipSchedule, instance: number): ReadonlyArray<ProcessId> => {
  let found: MembershipEpoch | undefined
  for (const e of s.epochs) if (e.fromInstance <= instance) found = e
  if (found === undefined) throw new Error(`membership: no epoch covers instance ${instance}`)
  return found.members
}

/**
 * The schedule after deciding `instance`: the last valid membership command of the decided set (canonical
 * order) becomes an epoch at `instance + delay`; epochs no instance after `instance` can use are dropped.
 */
export const scheduleAfterDecision = (
  s: MembershipSchedule,
  instance: number,
  decided: ReadonlyArray<Value>,
  delay: number
): MembershipSchedule => {
  let change: ReadonlyArray<ProcessId> | undefined
  for (const v of sortValues(decided)) if (v.kind === "membership" && isValidMembers(v.members)) change = v.members
  const epochs =
    change === undefined ? s.epochs : [...s.epochs, { fromInstance: instance + delay, members: sortIds(change) }]
  const firstLive = epochs.findLastIndex((e) => e.fromInstance <= instance + 1)
  return firstLive <= 0 && change === undefined ? s : { epochs: epochs.slice(Math.max(firstLive, 0)) }
}
