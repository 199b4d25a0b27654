/**
 * The coordinator core (App. C, Alg. 2) as a deterministic state machine. The shell feeds it proposals it made,
 * what consensus did with them, worker reports and object requests; it answers with tasks to send, as data.
 *
 *   OnProposedBlock(block):  RunStateless(block)            stateless parts to the least-loaded workers (§4.3)
 *                            specPlan ← PlanBlock(block)     on the scheduler's copy of the metadata (§4.4)
 *   OnCommittedBlock(block): plan ← specPlan if MatchesProposal(block), else PlanBlock(block)
 *                            Dispatch(plan)                  per-worker batches; owner[k] ← worker (App. A.7)
 *
 * "MatchesProposal": the committed block is the oldest proposal still in consensus and every plan before it
 * was adopted too, so its plan was computed on exactly the router's current metadata. Anything else (a
 * proposal committed out of order, a rejected one, a worker set that changed) discards every plan of the
 * window and the scheduler replans what is still pending on the router's metadata (Lemma 7: the versions used
 * are always those the committed order induces).
 *
 * The state is mutated in place and never shared: at 100k transactions a second a copy per step costs more than
 * the step. Its changes follow from the input log alone (proposals, commits, reports), which is what epochs, a
 * persist index and replay (§4.6) will build on.
 */

import type { WorkerLoad } from "./autoscaler.js"
import { type ClosedEpoch, closeEpoch, type LoggedBlock, type PersistedObject, type Persistence } from "./epochs.js"
import { InflightWindow } from "./inflight.js"
import {
  COORDINATOR_OWNER,
  KeyIndex,
  ObjectTable,
  OWNER_CODES,
  pack,
  SchedulerView,
  versionOf,
  WorkerRegistry
} from "./object-table.js"
import { type Candidates, leastLoaded, type PolicyName } from "./placement.js"
import {
  adoptPlan,
  GENESIS_CODE,
  type PlacementCursor,
  type Plan,
  PlannerScratch,
  planBlock,
  statefulWeight,
  statelessWeight
} from "./planner.js"
import { Prng } from "./prng.js"
import { type KeyedBlock, keyedBlock } from "./subgraphs.js"
import {
  COORDINATOR_SOURCE,
  GENESIS_SOURCE,
  type Key,
  type ProposedBlock,
  type Source,
  type TxMeta,
  type TxOutcome,
  type WorkerId,
  type WorkerRef
} from "./types.js"

/** Where the stateless part runs (§6.4, Fig. 6). */
export type Separation = "coordinator" | "worker" | "none"
/** Whether work happens during the consensus window or after commit (§6.5, Fig. 7). */
export type Timing = "pre-consensus" | "post-consensus"
/** Asymmetric: the coordinator schedules. Symmetric (SymArch, Fig. 4): every worker schedules every block. */
export type Architecture = "asymmetric" | "symmetric"

export interface CoordinatorParams {
  readonly seed: number
  readonly policy: PolicyName
  readonly architecture: Architecture
  /**
   * - coordinator: the coordinator sends stateless parts to the least-loaded workers; the stateful worker
   *   fetches the validation token (Coordinator-based Sep);
   * - worker: the stateful worker runs the stateless part itself, as its own task (Worker-based Sep);
   * - none: one task does both, one after the other (No Separation).
   */
  readonly separation: Separation
  readonly statelessTiming: Timing
  readonly schedulingTiming: Timing
  /** Version 0 of an untouched key is derived by the worker instead of fetched from the coordinator. */
  readonly genesisAtWorkers: boolean
  /** SymArch: emulated cost for a worker to schedule one transaction (µs). */
  readonly symmetricSchedulingCostUs: number
  /** An epoch ends after this many dispatched blocks (0: only on EndEpoch inputs, the shell's timer). */
  readonly epochBlocks: number
  /** Epoch reports asked for and not complete after this long (Tick time) are asked for again. */
  readonly epochRetryMs: number
}

export const defaultCoordinatorParams: CoordinatorParams = {
  seed: 1,
  policy: "sfs",
  architecture: "asymmetric",
  separation: "coordinator",
  statelessTiming: "pre-consensus",
  schedulingTiming: "pre-consensus",
  genesisAtWorkers: true,
  symmetricSchedulingCostUs: 0,
  epochBlocks: 0,
  epochRetryMs: 1_000
}

export interface StatelessTaskData<P> {
  readonly tx: TxMeta<P>
  readonly proposal: number
  /**
   * The worker the window's plan gives the stateful part (when it is not this one): the token is pushed there as
   * soon as it is computed, so the stateful part does not wait for a fetch after commit. "": keep it here.
   */
  readonly pushTo: WorkerId | ""
}

export interface StatefulTaskData<P> {
  /** Position in consensus order, from 1. */
  readonly seq: number
  readonly tx: TxMeta<P>
  /** Input version of each of `tx.keys`. */
  readonly versions: ReadonlyArray<number>
  /** Holder of each input version when dispatched (the worker's own id: produced by itself). */
  readonly sources: ReadonlyArray<Source>
  /** The worker holding the validation token; "" when the worker runs the stateless part itself. */
  readonly tokenSource: WorkerId | ""
  /** `tokenSource` pushes the token to this worker unasked (the plan was adopted): wait for it, no fetch. */
  readonly tokenPushed: boolean
  /** The stateless part runs inside the stateful task (no separation). */
  readonly combined: boolean
  /** Every seq below it has completed. */
  readonly watermark: number
  readonly height: number
  /** The snapshot epoch it belongs to: its writes are reported when the epoch ends (§4.6). */
  readonly epoch: number
  /** The fence generation it was dispatched in: a worker drops tasks of an older one. */
  readonly generation: number
}

export interface CompletionData {
  readonly seq: number
  readonly status: TxOutcome
  readonly leaseTransfers: number
  readonly detail: string
}

export type CoordinatorInput<P> =
  /** The active workers (new placements go only to them), each as the incarnation seen last. */
  | { readonly _tag: "Workers"; readonly workers: ReadonlyArray<WorkerRef> }
  /** The shell proposed `block` to consensus: its stateless parts go out (RunStateless of Alg. 2). */
  | { readonly _tag: "Propose"; readonly block: ProposedBlock<P> }
  /** Plans a proposal during the consensus window (PlanBlock of Alg. 2), after its Propose; separate so the
   *  shell can trace the two apart. A no-op when scheduling is post-consensus or the proposal is decided. */
  | { readonly _tag: "Plan"; readonly proposal: number }
  /** Consensus committed a proposal: the next block of the total order. */
  | { readonly _tag: "Commit"; readonly proposal: number }
  /** Consensus dropped a proposal: its transactions must be proposed again. */
  | { readonly _tag: "Reject"; readonly proposal: number }
  | {
      readonly _tag: "Report"
      readonly worker: WorkerId
      /** The reporting process's incarnation: completions count only from the one a task was sent to. */
      readonly incarnation: string
      readonly completions: ReadonlyArray<CompletionData>
      readonly statelessDoneUs: number
      /** The fence generation the completions were executed under: only the current one's count. */
      readonly generation: number
    }
  /** A worker asks the coordinator for a version it holds (the fallback owner, or the initial owner). */
  | { readonly _tag: "ObjectRequest"; readonly key: Key; readonly version: number; readonly requester: WorkerId }
  /** Time passes (epoch report retries). */
  | { readonly _tag: "Tick"; readonly nowMs: number }
  /** The shell's epoch timer: end the open epoch now (if anything was dispatched in it). */
  | { readonly _tag: "EndEpoch" }
  /**
   * Recover without a worker change: the shell saw no completion for a long while with work in flight (a task,
   * report or transfer lost with a NATS server restart; the bus delivers at most once).
   */
  | { readonly _tag: "Recover"; readonly reason: string }
  /**
   * Graceful scale-in (§4.7, Alg. 5): `worker` gets no new work; once nothing of it is in flight an epoch ends,
   * and once that epoch is persisted its objects are the coordinator's again (Reclaimed), then Retired.
   */
  | { readonly _tag: "Retire"; readonly worker: WorkerId; readonly reason: string }
  /** A worker's report of the latest version of each object it modified in epochs <= `epoch`. */
  | {
      readonly _tag: "EpochReport"
      readonly worker: WorkerId
      readonly generation: number
      readonly epoch: number
      readonly objects: ReadonlyArray<PersistedObject>
    }
  /** The shell wrote a Persist output to disk (atomically): the epoch is durable. */
  | { readonly _tag: "Persisted"; readonly epoch: number }
  /**
   * A restarted coordinator (a new incarnation) resumes from its durable state: the persisted snapshot, the
   * committed blocks after it, and a fence generation above any the old incarnation used (already on disk).
   * The blocks are replayed once workers are there; nothing is dispatched before.
   */
  | {
      readonly _tag: "Restore"
      readonly generation: number
      readonly persisted: Persistence
      readonly snapshot: ReadonlyArray<PersistedObject>
      readonly log: ReadonlyArray<LoggedBlock<P>>
    }

export type CoordinatorOutput<P> =
  | {
      readonly _tag: "SendStateless"
      readonly worker: WorkerId
      readonly incarnation: string
      readonly tasks: ReadonlyArray<StatelessTaskData<P>>
    }
  | {
      readonly _tag: "SendStateful"
      readonly worker: WorkerId
      /** The incarnation the tasks are for: another process with the same id must not run them. */
      readonly incarnation: string
      readonly height: number
      readonly tasks: ReadonlyArray<StatefulTaskData<P>>
    }
  | {
      readonly _tag: "SendSymmetric"
      readonly workers: ReadonlyArray<WorkerId>
      readonly height: number
      readonly firstSeq: number
      readonly txs: ReadonlyArray<TxMeta<P>>
      readonly watermark: number
      readonly schedulingCostUs: number
    }
  /** A plan was computed: during the consensus window (`at: "proposal"`) or after commit. */
  | {
      readonly _tag: "Planned"
      readonly proposal: number
      readonly at: "proposal" | "commit"
      readonly txs: number
      readonly subgraphs: number
    }
  | {
      readonly _tag: "Committed"
      readonly proposal: number
      readonly height: number
      readonly firstSeq: number
      readonly txs: ReadonlyArray<TxMeta<P>>
      /** The plan from the consensus window was used. */
      readonly adopted: boolean
    }
  /** Consensus dropped the proposal; the shell proposes its transactions again. */
  | { readonly _tag: "Rejected"; readonly proposal: number; readonly txs: ReadonlyArray<TxMeta<P>> }
  | {
      readonly _tag: "Completed"
      readonly seq: number
      readonly txId: string
      readonly worker: WorkerId
      readonly height: number
      readonly status: TxOutcome
      readonly leaseTransfers: number
      readonly detail: string
    }
  /**
   * A worker restarted (a new incarnation of the same id): its old incarnation gets no new work and is never
   * named as the source of a version again (its leases are the coordinator's to recover). `lostSeqs`: what was
   * sent to it and not completed; `leases`: objects it owned. Recovery (§4.6) is the `lost` list's consumer.
   */
  | {
      readonly _tag: "WorkerRestarted"
      readonly worker: WorkerId
      readonly previous: string
      readonly incarnation: string
      readonly lostSeqs: ReadonlyArray<number>
      readonly leases: number
    }
  /**
   * An object from the coordinator's store: its persisted value, its initial value, or "missing" (it does not
   * hold that version).
   */
  | {
      readonly _tag: "SendObject"
      readonly to: WorkerId
      readonly key: Key
      readonly version: number
      readonly value: Uint8Array | "genesis" | "missing"
    }
  /** Every task of `epoch` (and before) completed: ask the workers for their reports (EpochControl). */
  | { readonly _tag: "RequestEpochReports"; readonly workers: ReadonlyArray<WorkerId>; readonly epoch: number }
  /** Write the epoch's snapshot to disk atomically, then feed Persisted (Alg. 4, CollectAndPersist). */
  | {
      readonly _tag: "Persist"
      readonly epoch: number
      readonly persisted: Persistence
      readonly objects: ReadonlyArray<PersistedObject>
    }
  /** The epoch is durable: workers forget what they kept for its report. */
  | { readonly _tag: "EpochPersisted"; readonly workers: ReadonlyArray<WorkerId>; readonly epoch: number }
  /**
   * A new fence generation: the shell makes it durable first, then tells `workers` to drop every object, task
   * and token of older generations (their state is newer than the persisted snapshot and is replayed).
   */
  | { readonly _tag: "Fence"; readonly generation: number; readonly workers: ReadonlyArray<WorkerId> }
  /**
   * Recovery (§4.6): state was rolled back to the persisted snapshot and the committed blocks after it were
   * dispatched again (seqs `fromSeq..toSeq`) over `workers`, the restarted incarnation among them.
   */
  | {
      readonly _tag: "Recovered"
      readonly reason: string
      readonly generation: number
      readonly fromSeq: number
      readonly toSeq: number
      readonly blocks: number
      readonly workers: ReadonlyArray<WorkerId>
      readonly reclaimed: number
    }
  /** A Retire was accepted: the worker drains (no new stateful or stateless work; it still serves fetches). */
  | { readonly _tag: "Retiring"; readonly worker: WorkerId; readonly incarnation: string; readonly reason: string }
  /** A Retire that cannot be carried out: an unknown or inactive worker, or the last one that takes work. */
  | { readonly _tag: "RetireRefused"; readonly worker: WorkerId; readonly reason: string }
  /** A retirement given up: every other worker left, so the retiring one takes work again. */
  | { readonly _tag: "RetireCancelled"; readonly worker: WorkerId; readonly reason: string }
  /** Epoch-aligned reclaim: the retiring worker's objects are the coordinator's at their persisted versions. */
  | { readonly _tag: "Reclaimed"; readonly worker: WorkerId; readonly epoch: number; readonly objects: number }
  /**
   * The worker is out of the pool: nothing in flight needs it any more; the shell stops it (Shutdown). Its
   * departure from presence is expected and triggers no recovery. `left`: it left (crashed) while retiring.
   */
  | {
      readonly _tag: "Retired"
      readonly worker: WorkerId
      readonly incarnation: string
      readonly reason: string
      readonly reclaimed: number
      readonly left: boolean
    }

/** A worker on its way out (Alg. 5, ScaleIn). */
interface Retirement {
  readonly code: number
  readonly reason: string
  /**
   * draining: its tasks and tokens are still in use; persisting: the epoch `epoch` covers all it did and must be
   * persisted; releasing: reclaimed, waiting for tasks told to fetch from it (seqs <= `sourcedUntil`).
   */
  phase: "draining" | "persisting" | "releasing"
  epoch: number
  sourcedUntil: number
  reclaimed: number
}

interface Proposal<P> {
  readonly block: ProposedBlock<P>
  /** Its transactions' keys as ids (interned when proposed). */
  readonly keyed: KeyedBlock
  plan: Plan<P> | undefined
  /**
   * Its stateless parts, routed (and counted in the load) at proposal but held back until its first plan, so that
   * each token can be pushed where the plan runs the stateful part; undefined once sent (or never held).
   */
  stateless: Int32Array | undefined
}

export interface CoordinatorStats {
  proposals: number
  committed: number
  rejected: number
  plansAdopted: number
  plansRecomputed: number
  dispatched: number
  completed: number
  duplicateCompletions: number
  /** Completions from an incarnation other than the one the task was sent to (ignored). */
  staleCompletions: number
  ignoredCommits: number
  workerRestarts: number
  /** Workers that left (presence) while active. */
  workerLosses: number
  recoveries: number
  replayed: number
  epochsPersisted: number
}

/** What an old incarnation left behind: the hook for worker recovery (§4.6, a later issue). */
export interface LostIncarnation {
  readonly worker: WorkerRef
  readonly code: number
  readonly seqs: ReadonlyArray<number>
}

export interface CoordinatorState<P> {
  readonly params: CoordinatorParams
  readonly prng: Prng
  readonly registry: WorkerRegistry
  /** Every key ever proposed, by id (the metadata tables are indexed by it). */
  readonly keys: KeyIndex
  readonly scratch: PlannerScratch
  /** Owner codes of the active workers, by worker id. */
  active: ReadonlyArray<number>
  /** The router's metadata (authoritative). */
  readonly router: ObjectTable
  /** The scheduler's copy: the router's plus the plans of proposals in consensus. */
  readonly scheduler: SchedulerView
  /** Proposals in consensus, oldest first. */
  readonly pending: Array<Proposal<P>>
  /** Committed blocks waiting for a worker to exist. */
  readonly awaiting: Array<{ readonly proposal: Proposal<P>; readonly height: number }>
  readonly cursor: PlacementCursor
  readonly statelessCursor: { next: number }
  height: number
  /** Committed transactions not completed yet; its `next` is the next seq, its `watermark` the lowest open one. */
  readonly inflight: InflightWindow
  /**
   * Where each proposed transaction's token is, until its stateful dispatch: the code of the worker that runs its
   * stateless part, plus OWNER_CODES × the code it pushes the token to (0: it keeps it).
   */
  readonly statelessAt: Map<string, number>
  /** Outstanding work per owner code (µs): dispatched stateful, dispatched stateless, planned stateful. */
  statefulLoad: Float64Array
  statelessLoad: Float64Array
  plannedLoad: Float64Array
  /** Incarnations that restarted or left, with their unfinished work (recovered by replay). */
  readonly lost: Array<LostIncarnation>
  readonly stats: CoordinatorStats
  // ---- epochs, snapshots and recovery (§4.6, Alg. 4) ----
  /** Fence generation: bumped by every recovery; tasks and reports carry it. */
  generation: number
  /** The durable snapshot: the latest version of every object modified up to `persisted.seq`. */
  readonly snapshot: Map<Key, PersistedObject>
  persisted: Persistence
  /** Dispatched blocks after `persisted.height`, in order: the replay set of a recovery. */
  log: Array<LoggedBlock<P>>
  /** The open epoch and where it started. */
  epoch: number
  epochBlocks: number
  /** Ended epochs not persisted yet, oldest first; only the oldest collects reports. */
  closed: Array<ClosedEpoch>
  lastClosed: { seq: number; height: number }
  /** The log must be dispatched again once workers are there (after a fence or a restore). */
  replayPending: boolean
  /** The highest seq a recovery replayed (0: none yet). */
  replayedTo: number
  /** Why the pending replay is due, for its Recovered output. */
  pendingReason: string
  pendingReclaimed: number
  nowMs: number
  // ---- elasticity (§4.7, Alg. 5) ----
  /** Workers retiring, by id: they stay active (epoch reports, fetches) but get no new work. */
  readonly retiring: Map<WorkerId, Retirement>
  /** Incarnations retired gracefully: never named as a source again, never active again. */
  readonly decommissioned: Set<number>
}

export const createCoordinator = <P>(params: CoordinatorParams): CoordinatorState<P> => {
  const router = new ObjectTable()
  return {
    params,
    prng: new Prng(params.seed),
    registry: new WorkerRegistry(),
    keys: new KeyIndex(),
    scratch: new PlannerScratch(),
    active: [],
    router,
    scheduler: new SchedulerView(router),
    pending: [],
    awaiting: [],
    cursor: { roundRobin: 0 },
    statelessCursor: { next: 0 },
    height: 0,
    inflight: new InflightWindow(),
    statelessAt: new Map(),
    statefulLoad: new Float64Array(8),
    statelessLoad: new Float64Array(8),
    plannedLoad: new Float64Array(8),
    lost: [],
    stats: {
      proposals: 0,
      committed: 0,
      rejected: 0,
      plansAdopted: 0,
      plansRecomputed: 0,
      dispatched: 0,
      completed: 0,
      duplicateCompletions: 0,
      staleCompletions: 0,
      ignoredCommits: 0,
      workerRestarts: 0,
      workerLosses: 0,
      recoveries: 0,
      replayed: 0,
      epochsPersisted: 0
    },
    generation: 0,
    snapshot: new Map(),
    persisted: { epoch: 0, seq: 0, height: 0 },
    log: [],
    epoch: 1,
    epochBlocks: 0,
    closed: [],
    lastClosed: { seq: 0, height: 0 },
    replayPending: false,
    replayedTo: 0,
    pendingReason: "",
    pendingReclaimed: 0,
    nowMs: 0,
    retiring: new Map(),
    decommissioned: new Set()
  }
}

// ---- loads ------------------------------------------------------------------------------------------------

const grow = (a: Float64Array, size: number): Float64Array => {
  if (a.length >= size) return a
  const b = new Float64Array(Math.max(size, a.length * 2))
  b.set(a)
  return b
}

const ensureCapacity = (s: CoordinatorState<unknown>): void => {
  const size = s.registry.maxCode + 1
  s.statefulLoad = grow(s.statefulLoad, size)
  s.statelessLoad = grow(s.statelessLoad, size)
  s.plannedLoad = grow(s.plannedLoad, size)
}

/** The active workers that take new work (not retiring) with their load P, as a fresh scratch array. */
const candidates = (s: CoordinatorState<unknown>): Candidates => {
  const load = new Float64Array(s.registry.maxCode + 1)
  for (const c of s.active) load[c] = s.statefulLoad[c]! + s.statelessLoad[c]! + s.plannedLoad[c]!
  const codes = s.retiring.size === 0 ? s.active : s.active.filter((c) => !isRetiring(s, c))
  return { codes, load }
}

const isRetiring = (s: CoordinatorState<unknown>, code: number): boolean =>
  s.retiring.get(s.registry.idOf(code))?.code === code

/** An incarnation replaced by a newer one, or retired gracefully: its versions are the coordinator's. */
const gone = (s: CoordinatorState<unknown>, code: number): boolean =>
  s.registry.isRetired(code) || s.decommissioned.has(code)

const subtractInto = (target: Float64Array, amounts: Float64Array): void => {
  for (let c = 0; c < amounts.length; c++) target[c] = Math.max(0, target[c]! - amounts[c]!)
}

// ---- planning -----------------------------------------------------------------------------------------------

const planOptions = (s: CoordinatorState<unknown>) => ({
  policy: s.params.policy,
  genesisAtWorkers: s.params.genesisAtWorkers
})

/** Plans a proposal during the consensus window, on the scheduler's copy. */
const planProposal = <P>(s: CoordinatorState<P>, proposal: Proposal<P>, out: Array<CoordinatorOutput<P>>): void => {
  if (s.params.schedulingTiming !== "pre-consensus" || s.params.architecture !== "asymmetric") return
  if (s.active.length === 0) return
  const block = proposal.block
  const plan = planBlock(
    block.proposal,
    block.txs,
    proposal.keyed,
    s.keys.size,
    s.scheduler,
    candidates(s),
    s.cursor,
    s.prng,
    planOptions(s),
    s.scratch
  )
  proposal.plan = plan
  for (let c = 0; c < plan.load.length; c++) s.plannedLoad[c]! += plan.load[c]!
  out.push({
    _tag: "Planned",
    proposal: block.proposal,
    at: "proposal",
    txs: block.txs.length,
    subgraphs: plan.subgraphs
  })
  releaseStateless(s, proposal, plan.placement, out)
}

/**
 * Stateless parts wait for the window's plan when there is one (it is made in the same step of the shell), so
 * that each token can be pushed to the worker the plan gives the stateful part.
 */
const statelessWaitsForPlan = (s: CoordinatorState<unknown>): boolean =>
  s.params.statelessTiming === "pre-consensus" &&
  s.params.schedulingTiming === "pre-consensus" &&
  s.params.architecture === "asymmetric" &&
  s.params.separation === "coordinator" &&
  s.active.length > 0

/** Drops every plan of the window (§4.4's resync): the scheduler's copy becomes the router's again. */
const discardPlans = (s: CoordinatorState<unknown>): void => {
  for (const p of s.pending) {
    if (p.plan !== undefined) subtractInto(s.plannedLoad, p.plan.load)
    p.plan = undefined
  }
  s.scheduler.resync()
}

const replanPending = <P>(s: CoordinatorState<P>, out: Array<CoordinatorOutput<P>>): void => {
  for (const p of s.pending) planProposal(s, p, out)
}

// ---- stateless dispatch -------------------------------------------------------------------------------------

/** RunStateless of Alg. 2: each stateless part to the least-loaded worker (its load counted at once). */
const assignStateless = <P>(s: CoordinatorState<P>, block: ProposedBlock<P>): Int32Array | undefined => {
  if (s.params.separation !== "coordinator" || s.params.architecture !== "asymmetric" || s.active.length === 0) {
    return undefined
  }
  const cands = candidates(s)
  const assigned = new Int32Array(block.txs.length)
  for (let t = 0; t < block.txs.length; t++) {
    const tx = block.txs[t]!
    const w = leastLoaded(cands, s.statelessCursor)
    const weight = statelessWeight(tx)
    cands.load[w]! += weight
    s.statelessLoad[w]! += weight
    s.statelessAt.set(tx.id, w)
    assigned[t] = w
  }
  return assigned
}

/** Sends assigned stateless parts; `placement` (a plan, by transaction): the worker to push each token to. */
const sendStateless = <P>(
  s: CoordinatorState<P>,
  block: ProposedBlock<P>,
  assigned: Int32Array,
  out: Array<CoordinatorOutput<P>>,
  placement?: Int32Array
): void => {
  const byWorker = new Map<number, Array<StatelessTaskData<P>>>()
  for (let t = 0; t < block.txs.length; t++) {
    const tx = block.txs[t]!
    const w = assigned[t]!
    const planned = placement === undefined ? w : placement[t]!
    const pushTo = planned === w ? 0 : planned
    if (pushTo !== 0) s.statelessAt.set(tx.id, w + pushTo * OWNER_CODES)
    let tasks = byWorker.get(w)
    if (tasks === undefined) {
      tasks = []
      byWorker.set(w, tasks)
    }
    tasks.push({ tx, proposal: block.proposal, pushTo: pushTo === 0 ? "" : s.registry.idOf(pushTo) })
  }
  for (const [w, tasks] of byWorker) {
    out.push({ _tag: "SendStateless", worker: s.registry.idOf(w), incarnation: s.registry.incarnationOf(w), tasks })
  }
}

const dispatchStateless = <P>(s: CoordinatorState<P>, block: ProposedBlock<P>, out: Array<CoordinatorOutput<P>>) => {
  const assigned = assignStateless(s, block)
  if (assigned !== undefined) sendStateless(s, block, assigned, out)
}

/** Sends a proposal's stateless parts held back for its plan, pushing each token where `placement` puts it. */
const releaseStateless = <P>(
  s: CoordinatorState<P>,
  proposal: Proposal<P>,
  placement: Int32Array,
  out: Array<CoordinatorOutput<P>>
): void => {
  if (proposal.stateless === undefined) return
  sendStateless(s, proposal.block, proposal.stateless, out, placement)
  proposal.stateless = undefined
}

// ---- stateful dispatch --------------------------------------------------------------------------------------

/** A retired incarnation's versions are the coordinator's to hand out (after recovery): never its successor's. */
const sourceName = (s: CoordinatorState<unknown>, code: number): Source =>
  code === GENESIS_CODE
    ? GENESIS_SOURCE
    : code === COORDINATOR_OWNER || gone(s, code)
      ? COORDINATOR_SOURCE
      : s.registry.idOf(code)

/** Dispatch(plan) of Alg. 2: consecutive seqs in block order, one batch per worker. */
const dispatchPlan = <P>(
  s: CoordinatorState<P>,
  plan: Plan<P>,
  height: number,
  out: Array<CoordinatorOutput<P>>
): void => {
  const byWorker = new Map<number, Array<StatefulTaskData<P>>>()
  const separation = s.params.separation
  for (let t = 0; t < plan.txs.length; t++) {
    const tx = plan.txs[t]!
    const seq = s.inflight.next
    const w = plan.placement[t]!
    const from = plan.block.start[t]!
    const to = plan.block.start[t + 1]!
    const versions: Array<number> = new Array(to - from)
    const sources: Array<Source> = new Array(to - from)
    for (let i = from; i < to; i++) {
      versions[i - from] = plan.versions[i]!
      sources[i - from] = sourceName(s, plan.sources[i]!)
    }
    let tokenSource: WorkerId | "" = ""
    let tokenPushed = false
    if (separation === "coordinator") {
      const at = s.statelessAt.get(tx.id)
      if (at !== undefined) {
        s.statelessAt.delete(tx.id)
        const holder = at % OWNER_CODES
        const pushedTo = (at - holder) / OWNER_CODES
        // Pushed to another worker than this one (the plan changed): it is fetched from there.
        const from = pushedTo === 0 || pushedTo === w ? holder : pushedTo
        // A token held by a restarted incarnation is gone: the stateful worker runs the check itself.
        if (!gone(s, from)) {
          tokenSource = s.registry.idOf(from)
          tokenPushed = pushedTo === w
        }
      }
    }
    if (s.retiring.size > 0) noteSources(s, seq, plan.sources, from, to)
    const weight = statefulWeight(tx)
    s.statefulLoad[w]! += weight
    s.inflight.add(seq, tx.id, w, weight, height)
    let tasks = byWorker.get(w)
    if (tasks === undefined) {
      tasks = []
      byWorker.set(w, tasks)
    }
    tasks.push({
      seq,
      tx,
      versions,
      sources,
      tokenSource,
      tokenPushed,
      combined: separation === "none",
      watermark: s.inflight.watermark,
      height,
      epoch: s.epoch,
      generation: s.generation
    })
  }
  s.stats.dispatched += plan.txs.length
  for (const [w, tasks] of byWorker) {
    out.push({
      _tag: "SendStateful",
      worker: s.registry.idOf(w),
      incarnation: s.registry.incarnationOf(w),
      height,
      tasks
    })
  }
}

const dispatchSymmetric = <P>(
  s: CoordinatorState<P>,
  block: ProposedBlock<P>,
  height: number,
  out: Array<CoordinatorOutput<P>>
): void => {
  const firstSeq = s.inflight.next
  for (const tx of block.txs) s.inflight.add(s.inflight.next, tx.id, COORDINATOR_OWNER, 0, height)
  s.stats.dispatched += block.txs.length
  out.push({ _tag: "Committed", proposal: block.proposal, height, firstSeq, txs: block.txs, adopted: false })
  out.push({
    _tag: "SendSymmetric",
    workers: s.active.map((c) => s.registry.idOf(c)),
    height,
    firstSeq,
    txs: block.txs,
    watermark: s.inflight.watermark,
    schedulingCostUs: s.params.symmetricSchedulingCostUs
  })
}

/** OnCommittedBlock for a block whose speculation was dropped, or when planning is post-consensus. */
const planAtCommit = <P>(s: CoordinatorState<P>, proposal: Proposal<P>, out: Array<CoordinatorOutput<P>>): Plan<P> => {
  const block = proposal.block
  const plan = planBlock(
    block.proposal,
    block.txs,
    proposal.keyed,
    s.keys.size,
    s.router,
    candidates(s),
    s.cursor,
    s.prng,
    planOptions(s),
    s.scratch
  )
  out.push({
    _tag: "Planned",
    proposal: block.proposal,
    at: "commit",
    txs: block.txs.length,
    subgraphs: plan.subgraphs
  })
  return plan
}

const commitBlock = <P>(
  s: CoordinatorState<P>,
  proposal: Proposal<P>,
  wasOldest: boolean,
  height: number,
  out: Array<CoordinatorOutput<P>>
): void => {
  const block = proposal.block
  if (s.params.architecture === "symmetric") {
    dispatchSymmetric(s, block, height, out)
    return
  }
  const statelessPostCommit =
    s.params.separation === "coordinator" &&
    (s.params.statelessTiming === "post-consensus" || block.txs.some((tx) => !s.statelessAt.has(tx.id)))
  let plan: Plan<P>
  let adopted = false
  if (wasOldest && proposal.plan !== undefined) {
    plan = proposal.plan
    adoptPlan(plan, s.router)
    subtractInto(s.plannedLoad, plan.load)
    adopted = true
    s.stats.plansAdopted++
  } else {
    discardPlans(s)
    plan = planAtCommit(s, proposal, out)
    s.stats.plansRecomputed++
  }
  if (s.pending.length === 0) s.scheduler.resync()
  else if (!adopted) replanPending(s, out)
  out.push({ _tag: "Committed", proposal: block.proposal, height, firstSeq: s.inflight.next, txs: block.txs, adopted })
  // Held back for a plan that never came (none was made in the window): the committed plan says where.
  releaseStateless(s, proposal, plan.placement, out)
  if (statelessPostCommit) {
    dispatchStateless(s, { ...block, txs: block.txs.filter((tx) => !s.statelessAt.has(tx.id)) }, out)
  }
  s.log.push({ height, firstSeq: s.inflight.next, txs: block.txs })
  dispatchPlan(s, plan, height, out)
  if (s.params.epochBlocks > 0 && ++s.epochBlocks >= s.params.epochBlocks) endEpoch(s, out)
}

// ---- completions --------------------------------------------------------------------------------------------

const complete = <P>(
  s: CoordinatorState<P>,
  worker: WorkerId,
  reporter: number | undefined,
  generation: number,
  c: CompletionData,
  out: Array<CoordinatorOutput<P>>
) => {
  const sentTo = s.inflight.workerOf(c.seq)
  if (generation !== s.generation) {
    s.stats.staleCompletions++
    return
  }
  // SymArch's tasks are the coordinator's (every worker schedules); any other is its incarnation's alone.
  if (sentTo > COORDINATOR_OWNER && sentTo !== reporter) {
    s.stats.staleCompletions++
    return
  }
  const inflight = s.inflight.complete(c.seq)
  if (inflight === undefined) {
    s.stats.duplicateCompletions++
    return
  }
  if (inflight.worker !== COORDINATOR_OWNER) {
    s.statefulLoad[inflight.worker] = Math.max(0, s.statefulLoad[inflight.worker]! - inflight.weight)
  }
  s.stats.completed++
  out.push({
    _tag: "Completed",
    seq: c.seq,
    txId: inflight.txId,
    worker,
    height: inflight.height,
    status: c.status,
    leaseTransfers: c.leaseTransfers,
    detail: c.detail
  })
}

// ---- the step -------------------------------------------------------------------------------------------------

/** The refs' codes (sorted by worker id); an incarnation older than the worker's newest is a stale view. */
const activeCodes = <P>(
  s: CoordinatorState<P>,
  workers: ReadonlyArray<WorkerRef>,
  out: Array<CoordinatorOutput<P>>,
  restarted: Array<WorkerId>
): Array<number> => {
  const byId = new Map<WorkerId, WorkerRef>()
  for (const w of workers) byId.set(w.id, w)
  const codes: Array<number> = []
  for (const id of [...byId.keys()].sort()) {
    const ref = byId.get(id)!
    const previous = s.registry.newestOf(id)
    const code = s.registry.codeOf(id, ref.incarnation)
    if (gone(s, code)) continue
    if (previous !== undefined && previous !== code && !s.decommissioned.has(previous)) {
      retire(s, previous, ref, out)
      restarted.push(id)
    }
    codes.push(code)
  }
  return codes
}

/** An incarnation was replaced by a new one: nothing more goes to it, and what it had is reported lost. */
const retire = <P>(s: CoordinatorState<P>, code: number, next: WorkerRef, out: Array<CoordinatorOutput<P>>) => {
  const seqs = s.inflight.seqsOf(code)
  const worker = { id: next.id, incarnation: s.registry.incarnationOf(code) }
  s.lost.push({ worker, code, seqs })
  s.stats.workerRestarts++
  out.push({
    _tag: "WorkerRestarted",
    worker: next.id,
    previous: worker.incarnation,
    incarnation: next.incarnation,
    lostSeqs: seqs,
    leases: s.router.ownedBy(code)
  })
}

const setWorkers = <P>(s: CoordinatorState<P>, workers: ReadonlyArray<WorkerRef>, out: Array<CoordinatorOutput<P>>) => {
  const restarted: Array<WorkerId> = []
  const codes = activeCodes(s, workers, out, restarted)
  const same = codes.length === s.active.length && codes.every((c, i) => c === s.active[i])
  if (same) return
  ensureCapacity(s)
  const lost = s.active.filter((c) => !codes.includes(c) && !s.registry.isRetired(c))
  for (const c of lost) {
    s.stats.workerLosses++
    s.lost.push({
      worker: { id: s.registry.idOf(c), incarnation: s.registry.incarnationOf(c) },
      code: c,
      seqs: s.inflight.seqsOf(c)
    })
  }
  const added = codes.filter((c) => !s.active.includes(c))
  s.active = codes
  cancelRetirementsWithoutPeers(s, out)
  if (restarted.length > 0 || lost.length > 0) {
    const reason = [...restarted.map((id) => `${id} restarted`), ...lost.map((c) => `${s.registry.idOf(c)} left`)].join(
      ", "
    )
    recover(s, reason, out)
    // A retiring worker that crashed or restarted: the rollback took its objects back, nothing is left to wait for.
    for (const r of [...s.retiring.values()]) {
      if (lost.includes(r.code) || s.registry.isRetired(r.code)) finishRetirement(s, r, true, out)
    }
  } else if (s.replayPending && codes.length > 0) {
    // A restored coordinator (or a recovery that found no worker) replays once workers are there.
    if (s.generation > 0) out.push({ _tag: "Fence", generation: s.generation, workers: activeIds(s) })
    replayLog(s, s.pendingReason, s.pendingReclaimed, out)
  } else if (added.length > 0 && s.generation > 0) {
    // A worker back after a recovery (a pause, a partition) forgets what it held from before it.
    out.push({ _tag: "Fence", generation: s.generation, workers: added.map((c) => s.registry.idOf(c)) })
  }
  // Plans placed transactions on the old set: drop them and plan again (a resync, like a rejected block).
  discardPlans(s)
  replanPending(s, out)
  if (codes.length > 0) {
    for (const { proposal, height } of s.awaiting.splice(0)) {
      proposal.plan = undefined
      commitBlock(s, proposal, false, height, out)
    }
  }
}

export const stepCoordinator = <P>(
  s: CoordinatorState<P>,
  input: CoordinatorInput<P>
): ReadonlyArray<CoordinatorOutput<P>> => {
  const out: Array<CoordinatorOutput<P>> = []
  switch (input._tag) {
    case "Workers":
      setWorkers(s, input.workers, out)
      break
    case "Propose": {
      s.stats.proposals++
      const proposal: Proposal<P> = {
        block: input.block,
        keyed: keyedBlock(input.block.txs, s.keys),
        plan: undefined,
        stateless: undefined
      }
      s.pending.push(proposal)
      if (s.params.statelessTiming === "pre-consensus") {
        if (statelessWaitsForPlan(s)) proposal.stateless = assignStateless(s, input.block)
        else dispatchStateless(s, input.block, out)
      }
      break
    }
    case "Plan":
      // Plans are made in proposal order (each builds on the ones before it): any earlier proposal not planned
      // yet is planned first.
      for (const p of s.pending) {
        if (p.plan === undefined) planProposal(s, p, out)
        if (p.block.proposal === input.proposal) break
      }
      break
    case "Commit": {
      const index = s.pending.findIndex((p) => p.block.proposal === input.proposal)
      if (index < 0) {
        s.stats.ignoredCommits++
        break
      }
      const [proposal] = s.pending.splice(index, 1)
      const height = ++s.height
      s.stats.committed++
      if (s.active.length === 0) {
        discardPlans(s)
        s.awaiting.push({ proposal: proposal!, height })
        break
      }
      commitBlock(s, proposal!, index === 0, height, out)
      break
    }
    case "Reject": {
      const index = s.pending.findIndex((p) => p.block.proposal === input.proposal)
      if (index < 0) break
      const [proposal] = s.pending.splice(index, 1)
      s.stats.rejected++
      // Their stateless parts still run (the workers' reports take them off the load); the tokens are unused.
      // Parts held back for a plan never went out: their load comes off here.
      const held = proposal!.stateless
      const txs = proposal!.block.txs
      for (let t = 0; t < txs.length; t++) {
        s.statelessAt.delete(txs[t]!.id)
        if (held !== undefined) {
          const w = held[t]!
          s.statelessLoad[w] = Math.max(0, s.statelessLoad[w]! - statelessWeight(txs[t]!))
        }
      }
      if (proposal!.plan !== undefined) {
        discardPlans(s)
        replanPending(s, out)
      }
      out.push({ _tag: "Rejected", proposal: input.proposal, txs: proposal!.block.txs })
      break
    }
    case "Report": {
      const reporter = s.registry.find(input.worker, input.incarnation)
      for (const c of input.completions) complete(s, input.worker, reporter, input.generation, c, out)
      if (input.statelessDoneUs > 0 && reporter !== undefined) {
        s.statelessLoad[reporter] = Math.max(0, s.statelessLoad[reporter]! - input.statelessDoneUs)
      }
      if (input.completions.length > 0) requestReports(s, out)
      break
    }
    case "ObjectRequest": {
      // The coordinator holds the persisted version of every object (FetchFromCoordinator), and the initial
      // value of one never persisted.
      const held = s.snapshot.get(input.key)
      const value =
        held !== undefined
          ? held.version === input.version
            ? held.value
            : "missing"
          : input.version === 0
            ? "genesis"
            : "missing"
      out.push({ _tag: "SendObject", to: input.requester, key: input.key, version: input.version, value })
      break
    }
    case "Tick":
      s.nowMs = input.nowMs
      retryReports(s, out)
      break
    case "EndEpoch":
      endEpoch(s, out)
      break
    case "Recover":
      recover(s, input.reason, out)
      break
    case "EpochReport":
      collectReport(s, input, out)
      break
    case "Persisted":
      persisted(s, input.epoch, out)
      break
    case "Restore":
      restore(s, input, out)
      break
    case "Retire":
      startRetirement(s, input.worker, input.reason, out)
      break
  }
  if (s.retiring.size > 0) progressRetirements(s, out)
  return out
}

// ---- epochs and snapshots (Alg. 4) ------------------------------------------------------------------------

const activeIds = (s: CoordinatorState<unknown>): Array<WorkerId> => s.active.map((c) => s.registry.idOf(c))

/** OnEpochTrigger: the open epoch ends at the dispatch index; its reports are asked for once it completed. */
const endEpoch = <P>(s: CoordinatorState<P>, out: Array<CoordinatorOutput<P>>): void => {
  if (s.params.architecture !== "asymmetric" || s.replayPending) return
  const lastSeq = s.inflight.next - 1
  if (lastSeq <= s.lastClosed.seq) return
  s.closed.push(closeEpoch(s.epoch, s.lastClosed, lastSeq, s.log, s.keys, s.router))
  s.lastClosed = { seq: lastSeq, height: s.log[s.log.length - 1]!.height }
  s.epoch++
  s.epochBlocks = 0
  requestReports(s, out)
}

/** RequestSnapshot: once every seq of the oldest ended epoch has completed. */
const requestReports = <P>(s: CoordinatorState<P>, out: Array<CoordinatorOutput<P>>): void => {
  const c = s.closed[0]
  if (c === undefined || c.requestedAtMs !== undefined || s.inflight.watermark <= c.lastSeq) return
  c.requestedAtMs = s.nowMs
  out.push({ _tag: "RequestEpochReports", workers: activeIds(s), epoch: c.epoch })
}

const retryReports = <P>(s: CoordinatorState<P>, out: Array<CoordinatorOutput<P>>): void => {
  const c = s.closed[0]
  if (c === undefined) return
  if (c.requestedAtMs === undefined) {
    requestReports(s, out)
    return
  }
  if (c.persisting || s.nowMs - c.requestedAtMs < s.params.epochRetryMs) return
  c.requestedAtMs = s.nowMs
  out.push({ _tag: "RequestEpochReports", workers: activeIds(s), epoch: c.epoch })
}

/** Keeps each reported version the epoch's end needs (the coordinator knows them: its router's versions). */
const collectReport = <P>(
  s: CoordinatorState<P>,
  r: Extract<CoordinatorInput<P>, { _tag: "EpochReport" }>,
  out: Array<CoordinatorOutput<P>>
): void => {
  const c = s.closed[0]
  if (c === undefined || r.generation !== s.generation || r.epoch < c.epoch || c.persisting) return
  for (const o of r.objects) {
    if (c.expected.get(o.key) === o.version && !c.collected.has(o.key)) c.collected.set(o.key, o)
  }
  if (c.collected.size < c.expected.size) return
  c.persisting = true
  out.push({
    _tag: "Persist",
    epoch: c.epoch,
    persisted: { epoch: c.epoch, seq: c.lastSeq, height: c.lastHeight },
    objects: [...c.collected.values()]
  })
}

/** The epoch is on disk: advance persist_index, trim the replay log, let workers forget. */
const persisted = <P>(s: CoordinatorState<P>, epoch: number, out: Array<CoordinatorOutput<P>>): void => {
  const c = s.closed[0]
  if (c === undefined || c.epoch !== epoch || !c.persisting) return
  s.closed.shift()
  for (const o of c.collected.values()) s.snapshot.set(o.key, o)
  s.persisted = { epoch: c.epoch, seq: c.lastSeq, height: c.lastHeight }
  let drop = 0
  while (drop < s.log.length && s.log[drop]!.height <= c.lastHeight) drop++
  if (drop > 0) s.log = s.log.slice(drop)
  s.stats.epochsPersisted++
  out.push({ _tag: "EpochPersisted", workers: activeIds(s), epoch })
  requestReports(s, out)
}

// ---- recovery (§4.6) ----------------------------------------------------------------------------------------

/**
 * Rolls the execution state back to the persisted snapshot: every object is the coordinator's at its persisted
 * version (ownership reclaimed), nothing is in flight, and ended epochs not persisted are dropped. The log after
 * the snapshot is dispatched again by `replayLog`; by determinism every version it produces has the value it
 * had (Lemma 8). Returns how many keys were owned by workers.
 */
const rollBack = <P>(s: CoordinatorState<P>): number => {
  let reclaimed = 0
  for (let id = 0; id < s.keys.size; id++) if (ownerOfPacked(s.router.get(id)) !== COORDINATOR_OWNER) reclaimed++
  s.router.clear()
  for (const o of s.snapshot.values()) s.router.set(s.keys.intern(o.key), pack(o.version, COORDINATOR_OWNER))
  for (const p of s.pending) p.plan = undefined
  s.scheduler.resync()
  s.inflight.reset(s.persisted.seq + 1)
  s.statefulLoad.fill(0)
  s.statelessLoad.fill(0)
  s.plannedLoad.fill(0)
  s.statelessAt.clear()
  s.closed = []
  s.lastClosed = { seq: s.persisted.seq, height: s.persisted.height }
  s.epochBlocks = 0
  s.replayPending = true
  return reclaimed
}

const ownerOfPacked = (packed: number): number => packed % OWNER_CODES

/** A new fence generation, made durable by the shell before any worker hears of it. */
const fence = <P>(s: CoordinatorState<P>, out: Array<CoordinatorOutput<P>>): void => {
  s.generation++
  out.push({ _tag: "Fence", generation: s.generation, workers: activeIds(s) })
}

/** Dispatches the replay set (the log after the snapshot) again, in order, over the active workers. */
const replayLog = <P>(s: CoordinatorState<P>, reason: string, reclaimed: number, out: Array<CoordinatorOutput<P>>) => {
  if (!s.replayPending || s.active.length === 0) return
  s.replayPending = false
  const fromSeq = s.inflight.next
  const blocks = s.log
  s.log = []
  for (const b of blocks) {
    const keyed = keyedBlock(b.txs, s.keys)
    const plan = planBlock(
      0,
      b.txs,
      keyed,
      s.keys.size,
      s.router,
      candidates(s),
      s.cursor,
      s.prng,
      planOptions(s),
      s.scratch
    )
    if (b.firstSeq !== s.inflight.next) {
      throw new Error(`replay: block ${b.height} starts at seq ${b.firstSeq}, the next seq is ${s.inflight.next}`)
    }
    s.log.push(b)
    dispatchPlan(s, plan, b.height, out)
  }
  const toSeq = s.inflight.next - 1
  s.replayedTo = toSeq
  s.stats.recoveries++
  s.stats.replayed += toSeq - fromSeq + 1
  out.push({
    _tag: "Recovered",
    reason,
    generation: s.generation,
    fromSeq,
    toSeq,
    blocks: blocks.length,
    workers: activeIds(s),
    reclaimed
  })
  // Proposals in consensus were planned on the state before: plan them again.
  replanPending(s, out)
}

/** OnWorkerFailure: fence, roll back to the snapshot, replay (now, or once a worker is there). */
const recover = <P>(s: CoordinatorState<P>, reason: string, out: Array<CoordinatorOutput<P>>): void => {
  if (s.params.architecture !== "asymmetric") return
  const reclaimed = rollBack(s)
  // Every retirement closes an epoch again after the replay (the one it waited for may be dropped).
  // Tasks told to fetch from a releasing one are fenced off.
  for (const r of s.retiring.values()) {
    if (r.phase === "persisting") r.phase = "draining"
    r.sourcedUntil = 0
  }
  fence(s, out)
  s.pendingReason = reason
  s.pendingReclaimed = reclaimed
  replayLog(s, reason, reclaimed, out)
}

const restore = <P>(
  s: CoordinatorState<P>,
  r: Extract<CoordinatorInput<P>, { _tag: "Restore" }>,
  out: Array<CoordinatorOutput<P>>
): void => {
  s.generation = r.generation
  for (const o of r.snapshot) s.snapshot.set(o.key, o)
  s.persisted = r.persisted
  s.epoch = r.persisted.epoch + 1
  s.log = [...r.log]
  const last = r.log[r.log.length - 1]
  s.height = last?.height ?? r.persisted.height
  rollBack(s)
  s.pendingReason = "coordinator restarted"
  s.pendingReclaimed = 0
  if (s.active.length > 0) {
    out.push({ _tag: "Fence", generation: s.generation, workers: activeIds(s) })
    replayLog(s, s.pendingReason, 0, out)
  }
}

/** Committed transactions not completed yet. */
export const inflightCount = (s: CoordinatorState<unknown>): number => s.inflight.size

// ---- elasticity: graceful scale-in (§4.7, Alg. 5) -----------------------------------------------------------

/** StopPlacingStateful: the worker stays active (reports, fetches) but plans and stateless parts avoid it. */
const startRetirement = <P>(
  s: CoordinatorState<P>,
  worker: WorkerId,
  reason: string,
  out: Array<CoordinatorOutput<P>>
): void => {
  const code = s.registry.newestOf(worker)
  const refuse = (why: string) => out.push({ _tag: "RetireRefused", worker, reason: why })
  if (s.params.architecture !== "asymmetric") return void refuse("symmetric workers all schedule every block")
  if (code === undefined || !s.active.includes(code)) return void refuse("not an active worker")
  if (s.retiring.has(worker)) return void refuse("already retiring")
  if (s.active.every((c) => c === code || isRetiring(s, c))) return void refuse("the last worker that takes work")
  s.retiring.set(worker, { code, reason, phase: "draining", epoch: 0, sourcedUntil: 0, reclaimed: 0 })
  out.push({ _tag: "Retiring", worker, incarnation: s.registry.incarnationOf(code), reason })
  // Plans of the window may place work on it: plan them again without it.
  discardPlans(s)
  replanPending(s, out)
}

/** Tasks told to fetch a version from a retiring worker: it is stopped only after they completed. */
const noteSources = (
  s: CoordinatorState<unknown>,
  seq: number,
  sources: Int32Array | ReadonlyArray<number>,
  from: number,
  to: number
): void => {
  for (const r of s.retiring.values()) {
    for (let i = from; i < to; i++) if (sources[i] === r.code) r.sourcedUntil = seq
  }
}

/** Holds a token the stateful part of a transaction not dispatched yet will fetch. */
const holdsTokens = (s: CoordinatorState<unknown>, code: number): boolean => {
  for (const at of s.statelessAt.values()) {
    const holder = at % OWNER_CODES
    if (holder === code || (at - holder) / OWNER_CODES === code) return true
  }
  return false
}

/** WaitForLeasesToTransferOrExpire, then the epoch-aligned reclaim and Shutdown. */
const progressRetirements = <P>(s: CoordinatorState<P>, out: Array<CoordinatorOutput<P>>): void => {
  for (const r of [...s.retiring.values()]) {
    if (r.phase === "draining") {
      if (s.replayPending || s.inflight.seqsOf(r.code).length > 0 || holdsTokens(s, r.code)) continue
      // Everything it ran is dispatched before this point: the epoch ending here covers it.
      endEpoch(s, out)
      r.epoch = s.epoch - 1
      r.phase = "persisting"
    }
    if (r.phase === "persisting") {
      if (s.persisted.epoch < r.epoch) continue
      r.reclaimed = reclaim(s, r.code)
      r.phase = "releasing"
      out.push({ _tag: "Reclaimed", worker: s.registry.idOf(r.code), epoch: s.persisted.epoch, objects: r.reclaimed })
      discardPlans(s)
      replanPending(s, out)
    }
    if (r.phase === "releasing" && s.inflight.watermark > r.sourcedUntil) finishRetirement(s, r, false, out)
  }
}

/**
 * Every object the router still gives the worker goes back to the coordinator at the version it has: nothing
 * was placed on the worker since it drained, so that version is the one the persisted snapshot holds.
 */
const reclaim = (s: CoordinatorState<unknown>, code: number): number => {
  let reclaimed = 0
  for (let id = 0; id < s.keys.size; id++) {
    const packed = s.router.get(id)
    if (ownerOfPacked(packed) !== code) continue
    const key = s.keys.name(id)
    const version = versionOf(packed)
    const held = s.snapshot.get(key)
    if (held?.version !== version) {
      throw new Error(
        `reclaim: ${s.registry.idOf(code)} owns ${key}@${version}, the snapshot holds @${held?.version ?? "none"}`
      )
    }
    s.router.set(id, pack(version, COORDINATOR_OWNER))
    reclaimed++
  }
  s.scheduler.resync()
  return reclaimed
}

const finishRetirement = <P>(
  s: CoordinatorState<P>,
  r: Retirement,
  left: boolean,
  out: Array<CoordinatorOutput<P>>
): void => {
  const worker = s.registry.idOf(r.code)
  s.retiring.delete(worker)
  s.decommissioned.add(r.code)
  s.active = s.active.filter((c) => c !== r.code)
  out.push({
    _tag: "Retired",
    worker,
    incarnation: s.registry.incarnationOf(r.code),
    reason: r.reason,
    reclaimed: r.reclaimed,
    left
  })
}

/**
 * Nobody else takes work: a retiring worker must (RetireCancelled), except one already reclaimed, which just
 * retires (nobody is left to fetch from it).
 */
const cancelRetirementsWithoutPeers = <P>(s: CoordinatorState<P>, out: Array<CoordinatorOutput<P>>): void => {
  if (s.retiring.size === 0 || s.active.some((c) => !isRetiring(s, c))) return
  for (const [worker, r] of [...s.retiring]) {
    if (!s.active.includes(r.code)) continue
    if (r.phase === "releasing") {
      finishRetirement(s, r, false, out)
      continue
    }
    s.retiring.delete(worker)
    out.push({ _tag: "RetireCancelled", worker, reason: "no other worker takes work" })
  }
}

/** Workers retiring, by id (operator view). */
export const retiringWorkers = (s: CoordinatorState<unknown>): ReadonlyArray<WorkerId> => [...s.retiring.keys()]

/** The pool as the autoscaler sees it: each active worker's load P and whether it is retiring. */
export const poolLoads = (s: CoordinatorState<unknown>): Array<WorkerLoad> =>
  s.active.map((c) => ({
    id: s.registry.idOf(c),
    load: s.statefulLoad[c]! + s.statelessLoad[c]! + s.plannedLoad[c]!,
    state: isRetiring(s, c) ? "retiring" : "active"
  }))
