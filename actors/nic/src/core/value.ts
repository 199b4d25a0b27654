/**
 * Value identity, canonical order and size. The canonical order (proposer id, heartbeats after client values,
 * then incarnation, then seq) is what makes delivery of a decided *set* identical at every replica (Alg. 4, line 9: "forall
 * to be deterministic ... by using message and sender ids").
 */
import type { Incarnation, ProcessId, Value, ValueRef } from "./types.js"

/** The payload of every value without one (heartbeats, membership changes). */
export const EMPTY_PAYLOAD = new Uint8Array(0)

/** The identity of a value: two values with the same key are the same value. */
export const valueKey = (v: ValueRef): string =>
  `${v.proposer}/${v.incarnation}${v.kind === "heartbeat" ? "#h" : "#"}${v.seq}`

/**
 * `v` was proposed by this very process: same id *and* same incarnation. A value of the same id from an
 * earlier incarnation is a previous process's, never this one's.
 */
export const isOwnValue = (v: ValueRef, self: ProcessId, incarnation: Incarnation): boolean =>
  v.proposer === self && v.incarnation === incarnation

export const valueRef = (v: Value): ValueRef => ({
  proposer: v.proposer,
  incarnation: v.incarnation,
  seq: v.seq,
  kind: v.kind
})

export const compareIds = (a: ProcessId, b: ProcessId): number => (a < b ? -1 : a > b ? 1 : 0)

export const compareValues = (a: Value, b: Value): number => {
  const byProposer = compareIds(a.proposer, b.proposer)
  if (byProposer !== 0) return byProposer
  const aBeat = a.kind === "heartbeat" ? 1 : 0
  const bBeat = b.kind === "heartbeat" ? 1 : 0
  if (aBeat !== bBeat) return aBeat - bBeat
  const byIncarnation = compareIds(a.incarnation, b.incarnation)
  if (byIncarnation !== 0) return byIncarnation
  return a.seq - b.seq
}

/** A new array in canonical order; the input is not touched. */
export const sortValues = (values: Iterable<Value>): ReadonlyArray<Value> => Array.from(values).sort(compareValues)

export const sortIds = (ids: Iterable<ProcessId>): ReadonlyArray<ProcessId> => Array.from(ids).sort(compareIds)

export const clientValue = (
  proposer: ProcessId,
  incarnation: Incarnation,
  seq: number,
  payload: Uint8Array
): Value => ({
  proposer,
  incarnation,
  seq,
  kind: "client",
  payload,
  members: []
})

/** The paper's □: one per proposer per instance, so its seq is the instance number. */
export const heartbeatValue = (proposer: ProcessId, incarnation: Incarnation, instance: number): Value => ({
  proposer,
  incarnation,
  seq: instance,
  kind: "heartbeat",
  payload: EMPTY_PAYLOAD,
  members: []
})

export const membershipValue = (
  proposer: ProcessId,
  incarnation: Incarnation,
  seq: number,
  members: ReadonlyArray<ProcessId>
): Value => ({
  proposer,
  incarnation,
  seq,
  kind: "membership",
  payload: EMPTY_PAYLOAD,
  members: sortIds(members)
})

/** Fixed per-value overhead used by batching: ids, incarnation, seq and framing, roughly as encoded on the wire. */
export const VALUE_OVERHEAD_BYTES = 34

/** Approximate encoded size, used to bound a batch; exactness is not needed, a stable upper-ish bound is. */
export const valueSizeBytes = (v: Value): number =>
  VALUE_OVERHEAD_BYTES + v.payload.byteLength + v.members.reduce((sum, m) => sum + m.length + 2, 0)

/** Same identity and same content: used by checkers and by tests. */
export const sameValue = (a: Value, b: Value): boolean => {
  if (valueKey(a) !== valueKey(b) || a.kind !== b.kind) return false
  if (a.payload.byteLength !== b.payload.byteLength) return false
  for (let i = 0; i < a.payload.byteLength; i++) if (a.payload[i] !== b.payload[i]) return false
  return a.members.length === b.members.length && a.members.every((m, i) => m === b.members[i])
}
