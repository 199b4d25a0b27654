/**
 * The worker core (App. C, Alg. 3; App. A.9) as a deterministic state machine.
 *
 * Execution rule: "A Worker executes a stateful transaction T only when all Coordinator-assigned input versions
 * (k, i) for k ∈ R(T) ∪ W(T) are available locally, either produced by prior local execution or fetched through
 * lease transfer", and its validation token is known. Executing T consumes every (k, i) and produces (k, i+1),
 * with the contract's new value for written keys and the same value for read ones; an invalid token makes it a
 * no-op that still consumes and produces. A consumed version is dropped at once ("the runtime garbage-collects
 * ... the object version immediately after it has been consumed").
 *
 * Because every version has exactly one consumer (Lemma 4), a version that appears here (produced, fetched, or
 * the initial value) has one destination: the local task that consumes it, or the worker that asked for it
 * (a lease transfer), or it waits for whichever of the two shows up. So a worker holds at most one version of a
 * key, and `seen` (the newest version of each key ever here) recognises a duplicate or stale transfer.
 *
 * Service time is emulated: `cores` virtual cores, each unit of work (a stateless check, a stateful execution,
 * SymArch's scheduling) occupies one for its synthetic cost on the shell's timer. Signature checks (done by the
 * shell for units with `verify`) and contracts (the injected `execute`) run for real on top.
 */
import type { StatefulTaskData, StatelessTaskData } from "./coordinator.js"
import { Deque } from "./deque.js"
import type { PersistedObject } from "./epochs.js"
import { KeyIndex, ObjectTable, WorkerRegistry } from "./object-table.js"
import type { PolicyName } from "./placement.js"
import { GENESIS_CODE, type PlacementCursor, PlannerScratch, planBlock } from "./planner.js"
import { Prng } from "./prng.js"
import { keyedBlock } from "./subgraphs.js"
import {
  COORDINATOR_SOURCE,
  GENESIS_SOURCE,
  type Key,
  type Source,
  type TxMeta,
  type TxOutcome,
  type WorkerId
} from "./types.js"

export interface ExecOutcome {
  readonly status: "executed" | "aborted"
  readonly writes?: ReadonlyMap<Key, Uint8Array>
  readonly detail: string
}

export interface WorkerParams<P> {
  readonly self: WorkerId
  /** This process start: stateful tasks sent to an earlier incarnation of `self` are not run here. */
  readonly incarnation: string
  /** Virtual cores: units of work that run at once. */
  readonly cores: number
  /** An object or token request unanswered this long (Tick time) is sent again. */
  readonly retryAfterMs: number
  /** A validation token nobody asked for is forgotten after this long (a rejected proposal's). */
  readonly tokenTtlMs: number
  /** The initial value (k, 0). */
  readonly genesis: (key: Key) => Uint8Array
  /** The stateful part: runs the transaction's contract on its inputs. Must be deterministic. */
  readonly execute: (payload: P, read: (key: Key) => Uint8Array) => ExecOutcome
  /** SymArch: the placement policy every worker applies to every block. */
  readonly symmetricPolicy: PolicyName
  /** Emit `Produced`/`Consumed` events (the simulator's checkers read them). */
  readonly observe: boolean
}

/** A stateful task as it arrives (a StatefulTaskData plus the trace context of its consensus window). */
export interface StatefulIn<P> extends StatefulTaskData<P> {
  readonly trace: string
  /** The incarnation it was sent to ("": any, e.g. a task SymArch placed here itself). */
  readonly incarnation: string
}

export interface SymmetricIn<P> {
  readonly firstSeq: number
  readonly height: number
  readonly txs: ReadonlyArray<TxMeta<P>>
  readonly workers: ReadonlyArray<WorkerId>
  readonly watermark: number
  readonly schedulingCostUs: number
}

export type WorkerInput<P> =
  | { readonly _tag: "Tick"; readonly nowMs: number }
  | { readonly _tag: "Stateless"; readonly tasks: ReadonlyArray<StatelessTaskData<P>> }
  | { readonly _tag: "Stateful"; readonly tasks: ReadonlyArray<StatefulIn<P>> }
  | { readonly _tag: "Symmetric"; readonly block: SymmetricIn<P> }
  /** A virtual core finished a unit; `valid` is the shell's signature check for units that asked for one. */
  | { readonly _tag: "UnitDone"; readonly unit: number; readonly valid: boolean }
  | {
      readonly _tag: "ObjectRequest"
      readonly key: Key
      readonly version: number
      readonly requester: WorkerId
      readonly trace: string
      /** The requester's fence generation (undefined: this worker's). */
      readonly generation?: number
    }
  /** A lease transfer arrived; `value` undefined: the sender does not have that version ("missing"). */
  | {
      readonly _tag: "ObjectArrived"
      readonly key: Key
      readonly version: number
      readonly value: Uint8Array | undefined
      readonly from: Source
      /**
       * The sending worker's fence generation (SendObject's). Undefined: from the coordinator, whose persisted
       * versions hold in every generation. A transfer of another generation than this worker's is dropped.
       */
      readonly generation?: number
    }
  | { readonly _tag: "TokenRequest"; readonly txId: string; readonly requester: WorkerId }
  | { readonly _tag: "TokenArrived"; readonly txId: string; readonly valid: boolean }
  /** The coordinator rolled back to its snapshot: forget everything of older generations. */
  | { readonly _tag: "Fence"; readonly generation: number }
  /** Every task of epochs <= `epoch` completed: report what they modified (RequestSnapshot of Alg. 4). */
  | { readonly _tag: "ReportEpoch"; readonly generation: number; readonly epoch: number }
  /** Epochs <= `epoch` are durable at the coordinator: forget what was kept for their reports. */
  | { readonly _tag: "EpochPersisted"; readonly generation: number; readonly epoch: number }

export type WorkerOutput<P> =
  /** Occupy a virtual core for `costUs`, then feed UnitDone; with `verify`, check its signature first. */
  | { readonly _tag: "StartUnit"; readonly unit: number; readonly costUs: number; readonly verify: P | undefined }
  | {
      readonly _tag: "RequestObject"
      readonly to: Source
      readonly key: Key
      readonly version: number
      readonly trace: string
    }
  | {
      readonly _tag: "SendObject"
      readonly to: WorkerId
      readonly key: Key
      readonly version: number
      /** undefined: "missing". */
      readonly value: Uint8Array | undefined
      readonly trace: string
      /** The fence generation it is sent in (the receiver drops it when it is in another one). */
      readonly generation: number
    }
  | { readonly _tag: "RequestToken"; readonly to: WorkerId; readonly txId: string }
  | { readonly _tag: "SendToken"; readonly to: WorkerId; readonly txId: string; readonly valid: boolean }
  | {
      readonly _tag: "Completed"
      readonly seq: number
      readonly status: TxOutcome
      readonly leaseTransfers: number
      readonly detail: string
    }
  | { readonly _tag: "StatelessDone"; readonly costUs: number }
  /** The latest version of each object modified in epochs <= `epoch` (this generation's tasks). */
  | {
      readonly _tag: "EpochReport"
      readonly generation: number
      readonly epoch: number
      readonly objects: ReadonlyArray<PersistedObject>
    }
  /** Everything before `generation` was dropped: completions not reported yet of the old one must not count. */
  | { readonly _tag: "Fenced"; readonly generation: number }
  /** `observe` only: a transaction consumed (key, version) / a version came into existence here. */
  | {
      readonly _tag: "Consumed"
      readonly seq: number
      readonly key: Key
      readonly version: number
      readonly value: Uint8Array
    }
  | {
      readonly _tag: "Produced"
      readonly seq: number
      readonly key: Key
      readonly version: number
      readonly value: Uint8Array
    }

type Unit<P> =
  | {
      readonly kind: "stateless"
      readonly id: number
      readonly txId: string
      readonly costUs: number
      readonly payload: P
    }
  | {
      readonly kind: "stateful"
      readonly id: number
      readonly seq: number
      readonly costUs: number
      readonly verify: P | undefined
    }
  | { readonly kind: "schedule"; readonly id: number; readonly firstSeq: number; readonly costUs: number }

interface Task<P> {
  readonly data: StatefulIn<P>
  /** Inputs not here yet. */
  missing: number
  tokenKnown: boolean
  valid: boolean
  queued: boolean
  leaseTransfers: number
}

interface Pending {
  to: Source
  sentAtMs: number
  /** The hinted owner, retried after the coordinator said "missing". */
  readonly hinted: Source
  readonly trace: string
}

interface HeldObject {
  readonly version: number
  readonly value: Uint8Array
}

export interface WorkerStats {
  executed: number
  invalid: number
  aborted: number
  statelessRun: number
  leaseTransfersIn: number
  leaseTransfersOut: number
  duplicates: number
  /** Stateful tasks sent to another incarnation of this worker (dropped: their inputs were that one's). */
  foreign: number
  retries: number
  /** Tasks of an older fence generation (dropped), and fences taken. */
  fencedOff: number
  fences: number
}

export interface WorkerState<P> {
  readonly params: WorkerParams<P>
  nowMs: number
  /** The version of each key held here (at most one: see the module comment). */
  readonly objects: Map<Key, HeldObject>
  /** Newest version of each key ever held here. */
  readonly seen: Map<Key, number>
  /** Input versions not here yet -> the local task that consumes them. */
  readonly wanted: Map<string, number>
  /** Versions a peer asked for and that are not produced yet -> the peer. */
  readonly remoteWants: Map<string, { readonly requester: WorkerId; readonly trace: string }>
  /** Object requests sent and not answered. */
  readonly fetching: Map<string, Pending>
  readonly tasks: Map<number, Task<P>>
  /** Validation tokens computed here (or pushed here ahead of their task) and not claimed yet. */
  readonly tokens: Map<string, { readonly valid: boolean; readonly atMs: number }>
  /** Stateless checks queued or running here. */
  readonly checking: Set<string>
  /** Local tasks waiting for a token, and peers that asked for one not computed yet. */
  readonly tokenWaiters: Map<string, number>
  readonly tokenRequesters: Map<string, WorkerId>
  /** Where to push a token once computed here: the worker the coordinator's plan runs its stateful part on. */
  readonly pushTargets: Map<string, WorkerId>
  /** Tokens asked for, or (`pushed`) announced as pushed here: one not here after retryAfterMs is computed here. */
  readonly tokenFetching: Map<string, { readonly to: WorkerId; sentAtMs: number; readonly pushed: boolean }>
  /** Units ready for a core: stateful work first (it is on the dependency chain), then stateless checks. */
  readonly urgent: Deque<Unit<P>>
  readonly background: Deque<Unit<P>>
  readonly running: Map<number, Unit<P>>
  nextUnit: number
  /** Stateful tasks received (duplicate filter) above `watermark`, below which every seq has completed. */
  readonly received: Set<number>
  watermark: number
  prunedAt: number
  /** SymArch: blocks received, scheduled in order from `symmetricNext`, on this worker's own metadata copy. */
  readonly symmetric: Map<number, { readonly block: SymmetricIn<P>; scheduled: boolean }>
  symmetricNext: number
  readonly symmetricTable: ObjectTable
  readonly symmetricKeys: KeyIndex
  readonly symmetricScratch: PlannerScratch
  readonly symmetricRegistry: WorkerRegistry
  readonly symmetricCursor: PlacementCursor
  readonly stats: WorkerStats
  /** The coordinator's fence generation this state belongs to. */
  generation: number
  /** Per epoch, the latest version of each object this worker's tasks of that epoch produced (§4.6). */
  readonly epochWrites: Map<number, Map<Key, PersistedObject>>
}

export const createWorker = <P>(params: WorkerParams<P>): WorkerState<P> => ({
  params,
  nowMs: 0,
  objects: new Map(),
  seen: new Map(),
  wanted: new Map(),
  remoteWants: new Map(),
  fetching: new Map(),
  tasks: new Map(),
  tokens: new Map(),
  checking: new Set(),
  tokenWaiters: new Map(),
  tokenRequesters: new Map(),
  pushTargets: new Map(),
  tokenFetching: new Map(),
  urgent: new Deque(),
  background: new Deque(),
  running: new Map(),
  nextUnit: 1,
  received: new Set(),
  watermark: 1,
  prunedAt: 1,
  symmetric: new Map(),
  symmetricNext: 1,
  symmetricTable: new ObjectTable(),
  symmetricKeys: new KeyIndex(),
  symmetricScratch: new PlannerScratch(),
  symmetricRegistry: new WorkerRegistry(),
  symmetricCursor: { roundRobin: 0 },
  stats: {
    executed: 0,
    invalid: 0,
    aborted: 0,
    statelessRun: 0,
    leaseTransfersIn: 0,
    leaseTransfersOut: 0,
    duplicates: 0,
    foreign: 0,
    retries: 0,
    fencedOff: 0,
    fences: 0
  },
  generation: 0,
  epochWrites: new Map()
})

/**
 * Drops every object, task, token and epoch record (all newer than the coordinator's snapshot, which a replay
 * rebuilds). Units still on a virtual core finish into nothing: `running` forgets them.
 */
const fenceWorker = <P>(s: WorkerState<P>, generation: number, out: Out<P>): void => {
  if (generation <= s.generation) return
  s.generation = generation
  s.stats.fences++
  s.objects.clear()
  s.seen.clear()
  s.wanted.clear()
  s.remoteWants.clear()
  s.fetching.clear()
  s.tasks.clear()
  s.tokens.clear()
  s.checking.clear()
  s.tokenWaiters.clear()
  s.tokenRequesters.clear()
  s.pushTargets.clear()
  s.tokenFetching.clear()
  s.urgent.clear()
  s.background.clear()
  s.running.clear()
  s.received.clear()
  s.watermark = 1
  s.prunedAt = 1
  s.epochWrites.clear()
  out.push({ _tag: "Fenced", generation })
}

/** The latest version of each object modified in epochs <= `epoch`. */
const epochReport = <P>(s: WorkerState<P>, epoch: number): Array<PersistedObject> => {
  const latest = new Map<Key, PersistedObject>()
  for (const [e, writes] of s.epochWrites) {
    if (e > epoch) continue
    for (const [key, o] of writes) {
      const known = latest.get(key)
      if (known === undefined || known.version < o.version) latest.set(key, o)
    }
  }
  return [...latest.values()]
}

/** Map key of one object version. Keys are printable ASCII, so NUL never occurs in them. */
const versionKey = (key: Key, version: number): string => `${key}\u0000${version}`

type Out<P> = Array<WorkerOutput<P>>

// ---- virtual cores ------------------------------------------------------------------------------------------

const pump = <P>(s: WorkerState<P>, out: Out<P>): void => {
  while (s.running.size < s.params.cores) {
    const unit = s.urgent.shift() ?? s.background.shift()
    if (unit === undefined) return
    s.running.set(unit.id, unit)
    const verify = unit.kind === "stateless" ? unit.payload : unit.kind === "stateful" ? unit.verify : undefined
    out.push({ _tag: "StartUnit", unit: unit.id, costUs: unit.costUs, verify })
  }
}

// ---- versions -----------------------------------------------------------------------------------------------

/** A version is here (produced, transferred in, or the initial value): hand it to its one destination. */
const offer = <P>(s: WorkerState<P>, key: Key, version: number, value: Uint8Array, out: Out<P>): void => {
  if ((s.seen.get(key) ?? -1) < version) s.seen.set(key, version)
  const vk = versionKey(key, version)
  const consumer = s.wanted.get(vk)
  if (consumer !== undefined) {
    s.wanted.delete(vk)
    s.objects.set(key, { version, value })
    const task = s.tasks.get(consumer)
    if (task !== undefined) {
      task.missing--
      readyCheck(s, task)
    }
    return
  }
  const want = s.remoteWants.get(vk)
  if (want !== undefined) {
    s.remoteWants.delete(vk)
    s.stats.leaseTransfersOut++
    out.push({
      _tag: "SendObject",
      to: want.requester,
      key,
      version,
      value,
      trace: want.trace,
      generation: s.generation
    })
    return
  }
  s.objects.set(key, { version, value })
}

const request = <P>(
  s: WorkerState<P>,
  vk: string,
  to: Source,
  key: Key,
  version: number,
  trace: string,
  out: Out<P>
) => {
  s.fetching.set(vk, { to, sentAtMs: s.nowMs, hinted: to, trace })
  out.push({ _tag: "RequestObject", to, key, version, trace })
}

// ---- tasks --------------------------------------------------------------------------------------------------

const readyCheck = <P>(s: WorkerState<P>, task: Task<P>): void => {
  if (task.queued || task.missing > 0 || !task.tokenKnown) return
  task.queued = true
  const d = task.data
  s.urgent.push({
    kind: "stateful",
    id: s.nextUnit++,
    seq: d.seq,
    costUs: d.combined ? d.tx.statelessCostUs + d.tx.statefulCostUs : d.tx.statefulCostUs,
    verify: d.combined ? d.tx.payload : undefined
  })
}

const enqueueCheck = <P>(s: WorkerState<P>, tx: TxMeta<P>): void => {
  if (s.checking.has(tx.id) || s.tokens.has(tx.id)) return
  s.checking.add(tx.id)
  s.background.push({
    kind: "stateless",
    id: s.nextUnit++,
    txId: tx.id,
    costUs: tx.statelessCostUs,
    payload: tx.payload
  })
}

/**
 * A stateless task: run the check (once per transaction here), and push its token to `pushTo` when it is not
 * this worker. A later proposal of the same transaction (its first was rejected) names the current plan's worker:
 * the newest target wins, and a token already here goes to it now.
 */
const onStatelessTask = <P>(s: WorkerState<P>, tx: TxMeta<P>, pushTo: WorkerId | "", out: Out<P>): void => {
  if (pushTo !== "" && pushTo !== s.params.self) {
    const token = s.tokens.get(tx.id)
    if (token !== undefined) {
      s.tokens.delete(tx.id)
      out.push({ _tag: "SendToken", to: pushTo, txId: tx.id, valid: token.valid })
      return
    }
    s.pushTargets.set(tx.id, pushTo)
  }
  enqueueCheck(s, tx)
}

const isDuplicate = <P>(s: WorkerState<P>, seq: number): boolean => {
  if (seq < s.watermark || s.received.has(seq)) return true
  s.received.add(seq)
  return false
}

const advanceWatermark = <P>(s: WorkerState<P>, watermark: number): void => {
  if (watermark <= s.watermark) return
  s.watermark = watermark
  if (watermark - s.prunedAt < 4096) return
  for (const seq of s.received) if (seq < watermark) s.received.delete(seq)
  s.prunedAt = watermark
}

const registerStateful = <P>(s: WorkerState<P>, data: StatefulIn<P>, out: Out<P>): void => {
  if (data.incarnation !== "" && data.incarnation !== s.params.incarnation) {
    s.stats.foreign++
    return
  }
  if (data.generation < s.generation) {
    s.stats.fencedOff++
    return
  }
  // A task of a newer generation: the fence itself may still be on its way (or lost with a paused process).
  if (data.generation > s.generation) fenceWorker(s, data.generation, out)
  advanceWatermark(s, data.watermark)
  if (isDuplicate(s, data.seq)) {
    s.stats.duplicates++
    return
  }
  const self = s.params.self
  const task: Task<P> = { data, missing: 0, tokenKnown: data.combined, valid: true, queued: false, leaseTransfers: 0 }
  s.tasks.set(data.seq, task)
  const keys = data.tx.keys
  // Initial values are offered once every input is counted: an offer can complete the task's inputs.
  const initial: Array<Key> = []
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const version = data.versions[i]!
    const held = s.objects.get(key)
    if (held !== undefined && held.version === version) continue
    const vk = versionKey(key, version)
    s.wanted.set(vk, data.seq)
    task.missing++
    const source = data.sources[i]!
    if (source === self) continue // produced here by an earlier task
    if (source === GENESIS_SOURCE) {
      initial.push(key)
      continue
    }
    task.leaseTransfers++
    request(s, vk, source, key, version, data.trace, out)
  }
  for (const key of initial) offer(s, key, 0, s.params.genesis(key), out)
  if (!data.combined) {
    const txId = data.tx.id
    // Computed here, or pushed here (perhaps for an earlier proposal of it): whoever was to hold it, it is here.
    const token = s.tokens.get(txId)
    if (token !== undefined) {
      s.tokens.delete(txId)
      task.tokenKnown = true
      task.valid = token.valid
    } else {
      s.tokenWaiters.set(txId, data.seq)
      if (data.tokenSource === "" || data.tokenSource === self) {
        // The stateless task may have been lost with a rejected proposal's dispatch: run it if it is not here.
        enqueueCheck(s, data.tx)
      } else if (data.tokenPushed) {
        s.tokenFetching.set(txId, { to: data.tokenSource, sentAtMs: s.nowMs, pushed: true })
      } else {
        s.tokenFetching.set(txId, { to: data.tokenSource, sentAtMs: s.nowMs, pushed: false })
        out.push({ _tag: "RequestToken", to: data.tokenSource, txId })
      }
    }
  }
  readyCheck(s, task)
}

/** Runs a ready task's stateful part: consume every input, produce every output (App. A.9). */
const finishStateful = <P>(s: WorkerState<P>, task: Task<P>, valid: boolean, out: Out<P>): void => {
  const d = task.data
  const keys = d.tx.keys
  const inputs = new Map<Key, Uint8Array>()
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const held = s.objects.get(key)
    if (held === undefined || held.version !== d.versions[i]) {
      throw new Error(`worker ${s.params.self}: seq ${d.seq} ran without (${key}, ${d.versions[i]})`)
    }
    inputs.set(key, held.value)
  }
  let status: TxOutcome = "invalid-signature"
  let detail = "signature does not verify"
  let writes: ReadonlyMap<Key, Uint8Array> | undefined
  if (valid) {
    const outcome = s.params.execute(d.tx.payload, (key) => {
      const value = inputs.get(key)
      if (value === undefined) throw new Error(`undeclared key "${key}"`)
      return value
    })
    status = outcome.status
    detail = outcome.detail
    if (outcome.status === "executed") writes = outcome.writes
  }
  s.tasks.delete(d.seq)
  let epochWrites = s.epochWrites.get(d.epoch)
  if (epochWrites === undefined) {
    epochWrites = new Map()
    s.epochWrites.set(d.epoch, epochWrites)
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const version = d.versions[i]!
    s.objects.delete(key)
    const value = writes?.get(key) ?? inputs.get(key)!
    const recorded = epochWrites.get(key)
    if (recorded === undefined || recorded.version < version + 1)
      epochWrites.set(key, { key, version: version + 1, value })
    if (s.params.observe) {
      out.push({ _tag: "Consumed", seq: d.seq, key, version, value: inputs.get(key)! })
      out.push({ _tag: "Produced", seq: d.seq, key, version: version + 1, value })
    }
    offer(s, key, version + 1, value, out)
  }
  if (status === "executed") s.stats.executed++
  else if (status === "aborted") s.stats.aborted++
  else s.stats.invalid++
  out.push({ _tag: "Completed", seq: d.seq, status, leaseTransfers: task.leaseTransfers, detail })
}

// ---- tokens -------------------------------------------------------------------------------------------------

/**
 * A token computed here or pushed here: to its local task, to the peer that asked, pushed on to the worker the
 * plan named (`pushTo`), or kept until one of them shows up.
 */
const tokenComputed = <P>(
  s: WorkerState<P>,
  txId: string,
  valid: boolean,
  pushTo: WorkerId | "",
  out: Out<P>
): void => {
  const seq = s.tokenWaiters.get(txId)
  if (seq !== undefined) {
    tokenFor(s, txId, seq, valid)
    return
  }
  const requester = s.tokenRequesters.get(txId)
  if (requester !== undefined) {
    s.tokenRequesters.delete(txId)
    out.push({ _tag: "SendToken", to: requester, txId, valid })
    return
  }
  if (pushTo !== "") {
    out.push({ _tag: "SendToken", to: pushTo, txId, valid })
    return
  }
  s.tokens.set(txId, { valid, atMs: s.nowMs })
}

const tokenFor = <P>(s: WorkerState<P>, txId: string, seq: number, valid: boolean): void => {
  s.tokenWaiters.delete(txId)
  s.tokenFetching.delete(txId)
  const task = s.tasks.get(seq)
  if (task === undefined || task.tokenKnown) return
  task.tokenKnown = true
  task.valid = valid
  readyCheck(s, task)
}

// ---- SymArch --------------------------------------------------------------------------------------------------

/** Schedules the next blocks in order once their (emulated) scheduling work is done, and takes its own share. */
const planSymmetric = <P>(s: WorkerState<P>, out: Out<P>): void => {
  for (;;) {
    const entry = s.symmetric.get(s.symmetricNext)
    if (entry === undefined || !entry.scheduled) return
    s.symmetric.delete(s.symmetricNext)
    const b = entry.block
    s.symmetricNext = b.firstSeq + b.txs.length
    if (b.txs.length === 0) continue
    const registry = s.symmetricRegistry
    const codes = b.workers.map((w) => registry.codeOf(w))
    const self = registry.codeOf(s.params.self)
    const plan = planBlock(
      b.firstSeq,
      b.txs,
      keyedBlock(b.txs, s.symmetricKeys),
      s.symmetricKeys.size,
      s.symmetricTable,
      { codes, load: new Float64Array(registry.maxCode + 1) },
      s.symmetricCursor,
      new Prng(b.firstSeq),
      { policy: s.params.symmetricPolicy, genesisAtWorkers: true },
      s.symmetricScratch
    )
    const name = (code: number): Source =>
      code === GENESIS_CODE ? GENESIS_SOURCE : code === 0 ? COORDINATOR_SOURCE : registry.idOf(code)
    for (let t = 0; t < b.txs.length; t++) {
      if (plan.placement[t] !== self) continue
      const from = plan.block.start[t]!
      const to = plan.block.start[t + 1]!
      const versions: Array<number> = []
      const sources: Array<Source> = []
      for (let i = from; i < to; i++) {
        versions.push(plan.versions[i]!)
        sources.push(name(plan.sources[i]!))
      }
      registerStateful(
        s,
        {
          seq: b.firstSeq + t,
          tx: b.txs[t]!,
          versions,
          sources,
          tokenSource: "",
          tokenPushed: false,
          combined: true,
          watermark: b.watermark,
          height: b.height,
          epoch: 0,
          generation: s.generation,
          trace: "",
          incarnation: ""
        },
        out
      )
    }
  }
}

// ---- the step -------------------------------------------------------------------------------------------------

const onUnitDone = <P>(s: WorkerState<P>, id: number, valid: boolean, out: Out<P>): void => {
  const unit = s.running.get(id)
  if (unit === undefined) return
  s.running.delete(id)
  switch (unit.kind) {
    case "stateless": {
      s.checking.delete(unit.txId)
      s.stats.statelessRun++
      out.push({ _tag: "StatelessDone", costUs: unit.costUs })
      const pushTo = s.pushTargets.get(unit.txId) ?? ""
      s.pushTargets.delete(unit.txId)
      tokenComputed(s, unit.txId, valid, pushTo, out)
      break
    }
    case "stateful": {
      const task = s.tasks.get(unit.seq)
      if (task !== undefined) finishStateful(s, task, unit.verify === undefined ? task.valid : valid, out)
      break
    }
    case "schedule": {
      const entry = s.symmetric.get(unit.firstSeq)
      if (entry !== undefined) entry.scheduled = true
      planSymmetric(s, out)
      break
    }
  }
}

const onObjectRequest = <P>(
  s: WorkerState<P>,
  key: Key,
  version: number,
  requester: WorkerId,
  trace: string,
  out: Out<P>
): void => {
  const held = s.objects.get(key)
  if (held !== undefined && held.version === version) {
    s.objects.delete(key)
    s.stats.leaseTransfersOut++
    out.push({ _tag: "SendObject", to: requester, key, version, value: held.value, trace, generation: s.generation })
    return
  }
  if ((s.seen.get(key) ?? -1) >= version) {
    // Handed over or consumed already: a duplicate request, or the requester must look elsewhere.
    out.push({ _tag: "SendObject", to: requester, key, version, value: undefined, trace, generation: s.generation })
    return
  }
  s.remoteWants.set(versionKey(key, version), { requester, trace })
}

const onObjectArrived = <P>(
  s: WorkerState<P>,
  key: Key,
  version: number,
  value: Uint8Array | undefined,
  from: Source,
  out: Out<P>
): void => {
  const vk = versionKey(key, version)
  const pending = s.fetching.get(vk)
  if (value === undefined) {
    if (pending === undefined) return
    if (from !== COORDINATOR_SOURCE) {
      // The hinted owner does not have it: fall back to the coordinator (Alg. 3, FetchFromRouter).
      pending.to = COORDINATOR_SOURCE
      pending.sentAtMs = s.nowMs
      out.push({ _tag: "RequestObject", to: COORDINATOR_SOURCE, key, version, trace: pending.trace })
    } else {
      // Nobody has it yet: ask the hinted owner again after the retry delay.
      pending.to = pending.hinted
    }
    return
  }
  if ((s.seen.get(key) ?? -1) >= version || pending === undefined) {
    // A duplicate, or a transfer nobody here asked for (one meant for a fenced-off task): never kept.
    s.stats.duplicates++
    return
  }
  s.fetching.delete(vk)
  s.stats.leaseTransfersIn++
  offer(s, key, version, value, out)
}

const onTick = <P>(s: WorkerState<P>, nowMs: number, out: Out<P>): void => {
  s.nowMs = nowMs
  const retryBefore = nowMs - s.params.retryAfterMs
  for (const [vk, pending] of s.fetching) {
    if (pending.sentAtMs > retryBefore) continue
    const cut = vk.lastIndexOf("\u0000")
    pending.sentAtMs = nowMs
    s.stats.retries++
    out.push({
      _tag: "RequestObject",
      to: pending.to,
      key: vk.slice(0, cut),
      version: Number(vk.slice(cut + 1)),
      trace: pending.trace
    })
    // An owner that does not answer may be gone without a recovery (retired, paused): retries alternate with the
    // coordinator, which holds every persisted version (Alg. 3, FetchFromCoordinator); its "missing" sends the
    // next one back to the hinted owner.
    pending.to = pending.to === COORDINATOR_SOURCE ? pending.hinted : COORDINATOR_SOURCE
  }
  for (const [txId, pending] of s.tokenFetching) {
    if (pending.sentAtMs > retryBefore) continue
    s.stats.retries++
    // Not pushed or answered in time (a lost message, a holder that restarted, a token pushed for a plan that
    // changed): the check is deterministic, so run it here rather than wait on a holder that may never have it.
    s.tokenFetching.delete(txId)
    const task = s.tasks.get(s.tokenWaiters.get(txId) ?? -1)
    if (task !== undefined) enqueueCheck(s, task.data.tx)
  }
  const expired = nowMs - s.params.tokenTtlMs
  for (const [txId, token] of s.tokens) {
    // Insertion order is arrival order: the first young token ends the scan.
    if (token.atMs > expired) break
    s.tokens.delete(txId)
  }
}

export const stepWorker = <P>(s: WorkerState<P>, input: WorkerInput<P>): ReadonlyArray<WorkerOutput<P>> => {
  const out: Out<P> = []
  switch (input._tag) {
    case "Tick":
      onTick(s, input.nowMs, out)
      break
    case "Stateless":
      for (const t of input.tasks) onStatelessTask(s, t.tx, t.pushTo, out)
      break
    case "Stateful":
      for (const t of input.tasks) registerStateful(s, t, out)
      break
    case "Symmetric": {
      const b = input.block
      advanceWatermark(s, b.watermark)
      if (b.firstSeq < s.symmetricNext || s.symmetric.has(b.firstSeq)) {
        s.stats.duplicates++
        break
      }
      s.symmetric.set(b.firstSeq, { block: b, scheduled: false })
      s.urgent.push({
        kind: "schedule",
        id: s.nextUnit++,
        firstSeq: b.firstSeq,
        costUs: b.schedulingCostUs * b.txs.length
      })
      break
    }
    case "UnitDone":
      onUnitDone(s, input.unit, input.valid, out)
      break
    case "ObjectRequest": {
      const g = input.generation ?? s.generation
      if (g > s.generation) fenceWorker(s, g, out)
      if (g < s.generation) {
        // A task of a fenced-off generation: its result never counts, and the object is someone else's now.
        s.stats.fencedOff++
        break
      }
      onObjectRequest(s, input.key, input.version, input.requester, input.trace, out)
      break
    }
    case "ObjectArrived": {
      // A transfer sent in another generation: its version may be one a replay has not produced again yet,
      // arriving ahead of the inputs this worker still holds for earlier tasks (one version per key here). An
      // older one is stale; a newer one means this worker's fence is on its way (take it, then drop the
      // transfer: its fetch was of the old generation). The requester asks again in its own generation.
      const g = input.generation
      if (g !== undefined && g !== s.generation) {
        if (g > s.generation) fenceWorker(s, g, out)
        s.stats.fencedOff++
        break
      }
      onObjectArrived(s, input.key, input.version, input.value, input.from, out)
      break
    }
    case "TokenRequest": {
      const token = s.tokens.get(input.txId)
      if (token !== undefined) {
        s.tokens.delete(input.txId)
        out.push({ _tag: "SendToken", to: input.requester, txId: input.txId, valid: token.valid })
      } else s.tokenRequesters.set(input.txId, input.requester)
      break
    }
    case "Fence":
      fenceWorker(s, input.generation, out)
      break
    case "ReportEpoch":
      if (input.generation > s.generation) fenceWorker(s, input.generation, out)
      if (input.generation === s.generation) {
        out.push({
          _tag: "EpochReport",
          generation: s.generation,
          epoch: input.epoch,
          objects: epochReport(s, input.epoch)
        })
      }
      break
    case "EpochPersisted":
      if (input.generation === s.generation)
        for (const e of [...s.epochWrites.keys()]) if (e <= input.epoch) s.epochWrites.delete(e)
      break
    case "TokenArrived":
      // Asked for, or pushed here by the worker that computed it (perhaps ahead of its task). One being computed
      // here as well (the push was late) is kept once.
      if (s.tokenWaiters.has(input.txId) || !s.checking.has(input.txId)) {
        tokenComputed(s, input.txId, input.valid, "", out)
      }
      break
  }
  pump(s, out)
  return out
}

/** Work in progress: tasks waiting or running, and units queued. */
export const workerLoad = <P>(s: WorkerState<P>) => ({
  waiting: s.tasks.size,
  queued: s.urgent.length + s.background.length,
  busyCores: s.running.size
})
