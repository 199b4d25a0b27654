/**
 * Values travel once. Alg. 2 multi-sends the whole set V in every round ("full value set relay"), so round 2
 * repeats every client value from every replica: O(N²) value bodies per instance, each decoded by every
 * receiver although it already holds nearly all of them from round 1. On the wire a round message of round 2
 * or later names its client values and heartbeats by identity (proposer, incarnation, seq, kind: unique per
 * value, types.ts) and carries only the bodies of membership commands (rare, and small). Round 1 carries its
 * sender's proposal in full, as before.
 *
 * The core still sends and receives whole values: the shell compacts a round message as it encodes it and
 * resolves one before the core sees it. A message naming a value whose body this process does not hold
 * (its proposer's round-1 message never reached it: an omission) is held back while the shell asks the
 * message's sender for the bodies; the sender holds every value it names, since it merged them as whole
 * values. Holding a message only delays it, and the protocol's safety never depends on when a message
 * arrives (App. A, Observation A.1): one still held when its round closes is an omission, which the protocol
 * tolerates like any other. The core never merges part of a message: a message whose references cannot all
 * be resolved is not merged at all (merging it without the unknown values would break Observation A.3,
 * "V_j[r-1] ⊆ V_i[r]", and with it uniform agreement; `sim/mutants.ts` has that broken variant).
 */
import type { RoundMsg, Value, ValueRef } from "./types.js"
import { EMPTY_PAYLOAD, valueKey } from "./value.js"

/** A round message as it travels: `values` with their bodies, `refs` by identity only. */
export interface CompactRound extends Omit<RoundMsg, "values"> {
  readonly values: ReadonlyArray<Value>
  readonly refs: ReadonlyArray<ValueRef>
}

/** Named by identity in rounds 2 and later: client values and heartbeats (membership commands carry their list). */
export const travelsByReference = (v: Pick<Value, "kind">): boolean => v.kind !== "membership"

/** The wire form of `msg`: round 1 whole; later rounds with client values and heartbeats by reference. */
export const compactRound = (msg: RoundMsg): CompactRound => {
  if (msg.round < 2) return { ...msg, refs: [] }
  const values: Array<Value> = []
  const refs: Array<ValueRef> = []
  for (const v of msg.values) {
    if (travelsByReference(v)) refs.push({ proposer: v.proposer, incarnation: v.incarnation, seq: v.seq, kind: v.kind })
    else values.push(v)
  }
  return { ...msg, values, refs }
}

/** A round message sent whole (`--round-values full`): what Alg. 2 sends. */
export const wholeRound = (msg: RoundMsg): CompactRound => ({ ...msg, refs: [] })

export type Resolution =
  | { readonly _tag: "Resolved"; readonly msg: RoundMsg }
  /** Bodies this process does not hold: the message waits for them (or is an omission). */
  | { readonly _tag: "Missing"; readonly refs: ReadonlyArray<ValueRef> }

/**
 * `msg` with every reference replaced by its body, or the references whose bodies `lookup` does not know. A
 * heartbeat's body is its identity (no payload), so it always resolves.
 */
export const resolveRound = (msg: CompactRound, lookup: (key: string) => Value | undefined): Resolution => {
  const { refs, ...rest } = msg
  if (refs.length === 0) return { _tag: "Resolved", msg: rest }
  const values: Array<Value> = [...msg.values]
  let missing: Array<ValueRef> | undefined
  for (const ref of refs) {
    if (ref.kind === "heartbeat") {
      values.push({ ...ref, payload: EMPTY_PAYLOAD, members: [] })
      continue
    }
    const body = lookup(valueKey(ref))
    if (body === undefined || body.kind !== ref.kind) {
      missing ??= []
      missing.push(ref)
    } else values.push(body)
  }
  return missing === undefined ? { _tag: "Resolved", msg: { ...rest, values } } : { _tag: "Missing", refs: missing }
}
