/**
 * Distributed materialisation (§3.3 Coordination, Fault-tolerance): which client creates which snapshot.
 * "A library begins snapshot creation by appending a begin-snapshot command to the state log, indicating
 * (1) the range of commands it aims to compact and (2) Time to Live (TTL). Then, the library immediately
 * checks the state log to confirm there are no conflicting begin-snapshot commands that appear earlier in the
 * log." A begin whose snapshot has not appeared TTL after a client first saw it (on that client's own
 * clock: no global clock) may be taken over by a begin of its own.
 *
 * The state-log view is plain data; `applyStateRecord` is its transition, the plan functions read it.
 */
import {
  type Chain,
  chainEnd,
  emptyChain,
  isSuccessor,
  type MergePolicy,
  pickMerge,
  type SnapshotRef
} from "./chain.js"
import { needsSnapshot, type TimelyPolicy } from "./timely.js"

/** The store's parameters, fixed by its first client in the state log's first record. */
export interface StoreConfig {
  readonly formatVersion: number
  /** Conflict window W (entries): a transaction whose snapshot is older aborts. */
  readonly conflictWindow: number
  readonly timely: TimelyPolicy
  /** Time a begin-snapshot holds its range before others may take it over. */
  readonly snapshotTtlMs: number
  /** Records per segment: every writer seals a segment at the same place. */
  readonly layout: LogLayout
}

export interface LogLayout {
  readonly commandSegmentRecords: number
  readonly stateSegmentRecords: number
  readonly metaSegmentRecords: number
}

export interface Begin {
  readonly from: number
  readonly to: number
  readonly ttlMs: number
  readonly owner: string
  readonly merge: boolean
}

export type StateRecord =
  | { readonly _tag: "Config"; readonly index: number; readonly config: StoreConfig }
  | { readonly _tag: "Begin"; readonly index: number; readonly begin: Begin }
  | { readonly _tag: "Chain"; readonly index: number; readonly chain: Chain; readonly owner: string }

export interface BeginSeen extends Begin {
  readonly index: number
  /** This client's clock when it first read the record. */
  readonly seenAtMs: number
}

export interface StateView {
  readonly config: StoreConfig | undefined
  readonly chain: Chain
  /** Begins whose snapshot has not appeared yet, in log order. */
  readonly begins: ReadonlyArray<BeginSeen>
  /** State-log records applied. */
  readonly next: number
  /** Chain records that were not legal successors (ignored; counted for the operator). */
  readonly rejected: number
}

export const emptyStateView: StateView = { config: undefined, chain: emptyChain, begins: [], next: 0, rejected: 0 }

const overlaps = (a: { from: number; to: number }, b: { from: number; to: number }) => a.from < b.to && b.from < a.to

/** Whether a begin is still live for the chain: its range is not materialised and fits the chain. */
const stillPending = (chain: Chain, b: Begin): boolean => {
  const end = chainEnd(chain)
  if (!b.merge) return b.from === end
  return chain.snapshots.some((s) => s.from === b.from) && chain.snapshots.some((s) => s.to === b.to)
}

export const applyStateRecord = (view: StateView, record: StateRecord, nowMs: number): StateView => {
  if (record.index !== view.next) throw new Error(`state record ${record.index} applied when ${view.next} was next`)
  const next = view.next + 1
  switch (record._tag) {
    case "Config":
      return { ...view, next, config: view.config ?? record.config }
    case "Begin":
      return { ...view, next, begins: [...view.begins, { ...record.begin, index: record.index, seenAtMs: nowMs }] }
    case "Chain": {
      if (!isSuccessor(view.chain, record.chain)) return { ...view, next, rejected: view.rejected + 1 }
      return {
        ...view,
        next,
        chain: record.chain,
        begins: view.begins.filter((b) => stillPending(record.chain, b))
      }
    }
  }
}

export const isExpired = (b: BeginSeen, nowMs: number): boolean => nowMs >= b.seenAtMs + b.ttlMs

export type SnapshotPlan =
  | { readonly _tag: "Idle" }
  /** Another client holds the range; look again at `untilMs` (its TTL on this client's clock). */
  | { readonly _tag: "Wait"; readonly owner: string; readonly untilMs: number }
  /** This client's own begin is live: it is (or was, before a crash) creating the snapshot. */
  | { readonly _tag: "Mine"; readonly begin: BeginSeen }
  | { readonly _tag: "Begin"; readonly begin: Begin }

const planFor = (
  view: StateView,
  range: { readonly from: number; readonly to: number; readonly merge: boolean },
  nowMs: number,
  self: string,
  ttlMs: number
): SnapshotPlan => {
  const live = view.begins.filter((b) => b.merge === range.merge && overlaps(b, range) && !isExpired(b, nowMs))
  const mine = live.find((b) => b.owner === self)
  if (mine !== undefined) return { _tag: "Mine", begin: mine }
  const other = live[0]
  if (other !== undefined) return { _tag: "Wait", owner: other.owner, untilMs: other.seenAtMs + other.ttlMs }
  return { _tag: "Begin", begin: { ...range, ttlMs, owner: self } }
}

/** Whether this client should materialise new entries: Φ(i_k, n] once n − i_k ≥ B. */
export const planExtension = (view: StateView, n: number, nowMs: number, self: string): SnapshotPlan => {
  const config = view.config
  const end = chainEnd(view.chain)
  if (config === undefined || !needsSnapshot(n, end, config.timely)) return { _tag: "Idle" }
  return planFor(view, { from: end, to: n, merge: false }, nowMs, self, config.snapshotTtlMs)
}

/** Whether this client should merge two adjacent snapshots (recursive compaction). */
export const planMerge = (
  view: StateView,
  nowMs: number,
  self: string,
  policy: MergePolicy
): { readonly plan: SnapshotPlan; readonly parts: readonly [SnapshotRef, SnapshotRef] } | undefined => {
  const config = view.config
  const pair = pickMerge(view.chain, policy)
  if (config === undefined || pair === undefined) return undefined
  const range = { from: pair[0].from, to: pair[1].to, merge: true }
  return { plan: planFor(view, range, nowMs, self, config.snapshotTtlMs), parts: pair }
}

/**
 * The check right after appending a begin at `index`: no live begin for an overlapping range appears earlier
 * in the log. (With the state log's conditional appends it holds whenever the plan said Begin; a client
 * still checks, as the paper does.)
 */
export const confirmBegin = (view: StateView, index: number, nowMs: number): boolean => {
  const mine = view.begins.find((b) => b.index === index)
  if (mine === undefined) return false
  return !view.begins.some(
    (b) => b.index < index && b.merge === mine.merge && overlaps(b, mine) && !isExpired(b, nowMs)
  )
}
