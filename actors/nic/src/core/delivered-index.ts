/**
 * Which values were already delivered, for TOB's "no duplication". Per proposer, every seq below `floor` is
 * delivered and `above` holds the delivered seqs past the first gap. Proposers propose a prefix of their
 * pending values in seq order, so gaps are rare and short-lived and the index stays small however long the
 * log grows (unlike a set of every key ever delivered).
 */
import type { ProcessId, Value } from "./types.js"

interface ProposerWindow {
  readonly floor: number
  readonly above: ReadonlySet<number>
}

export type DeliveredIndex = ReadonlyMap<ProcessId, ProposerWindow>

export const emptyDeliveredIndex: DeliveredIndex = new Map()

/** Heartbeats are never delivered, so they are never "delivered" here either. */
export const isDelivered = (index: DeliveredIndex, v: Value): boolean => {
  if (v.kind === "heartbeat") return false
  const w = index.get(v.proposer)
  return w !== undefined && (v.seq < w.floor || w.above.has(v.seq))
}

export const markDelivered = (index: DeliveredIndex, v: Value): DeliveredIndex => {
  if (v.kind === "heartbeat" || isDelivered(index, v)) return index
  const w = index.get(v.proposer) ?? { floor: 0, above: new Set<number>() }
  let floor = w.floor
  const above = new Set(w.above)
  above.add(v.seq)
  while (above.delete(floor)) floor++
  return new Map(index).set(v.proposer, { floor, above })
}
