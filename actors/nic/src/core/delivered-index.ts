/**
 * Which values were already delivered, for TOB's "no duplication". Per proposer incarnation (a process start,
 * types.ts), every seq below `floor` is delivered and `above` holds the delivered seqs past the first gap. A
 * process proposes a prefix of its pending values in seq order, so gaps are rare and short-lived and the index
 * stays small however long the log grows (unlike a set of every key ever delivered): one window per process
 * start, a few dozen bytes each.
 */
import type { Incarnation, ProcessId, Value } from "./types.js"

export interface DeliveredWindow {
  readonly floor: number
  readonly above: ReadonlySet<number>
}

/** Proposer, then incarnation: nested, so a lookup builds no key. */
export type DeliveredIndex = ReadonlyMap<ProcessId, ReadonlyMap<Incarnation, DeliveredWindow>>

export const emptyDeliveredIndex: DeliveredIndex = new Map()

const windowOf = (index: DeliveredIndex, v: Pick<Value, "proposer" | "incarnation">): DeliveredWindow | undefined =>
  index.get(v.proposer)?.get(v.incarnation)

/** Heartbeats are never delivered, so they are never "delivered" here either. */
export const isDelivered = (index: DeliveredIndex, v: Value): boolean => {
  if (v.kind === "heartbeat") return false
  const w = windowOf(index, v)
  return w !== undefined && (v.seq < w.floor || w.above.has(v.seq))
}

export const markDelivered = (index: DeliveredIndex, v: Value): DeliveredIndex => {
  if (v.kind === "heartbeat" || isDelivered(index, v)) return index
  const w = windowOf(index, v) ?? { floor: 0, above: new Set<number>() }
  let floor = w.floor
  const above = new Set(w.above)
  above.add(v.seq)
  while (above.delete(floor)) floor++
  const incarnations = new Map(index.get(v.proposer)).set(v.incarnation, { floor, above })
  return new Map(index).set(v.proposer, incarnations)
}

/** Every window, flattened (e.g. to send the index over the wire). */
export const deliveredWindows = (
  index: DeliveredIndex
): ReadonlyArray<{
  readonly proposer: ProcessId
  readonly incarnation: Incarnation
  readonly window: DeliveredWindow
}> =>
  [...index].flatMap(([proposer, incarnations]) =>
    [...incarnations].map(([incarnation, window]) => ({ proposer, incarnation, window }))
  )

/** The index made of `windows` (the inverse of `deliveredWindows`). */
export const deliveredIndexOf = (
  windows: Iterable<{
    readonly proposer: ProcessId
    readonly incarnation: Incarnation
    readonly window: DeliveredWindow
  }>
): DeliveredIndex => {
  const index = new Map<ProcessId, Map<Incarnation, DeliveredWindow>>()
  for (const { proposer, incarnation, window } of windows) {
    const incarnations = index.get(proposer) ?? new Map<Incarnation, DeliveredWindow>()
    incarnations.set(incarnation, window)
    index.set(proposer, incarnations)
  }
  return index
}
