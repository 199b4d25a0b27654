/**
 * One simulated Remora validator (TigerBeetle VOPR style): the real coordinator and worker cores, driven by a
 * seeded event queue that plays clients, consensus (a window that may reject proposals or commit them out of
 * order), the network (delays, reordering, duplicates) and slow workers. Everything a run does follows from its
 * configuration and seed; the checker (checker.ts) then compares what the cores did with the sequential
 * reference executor.
 */
import type { Transaction } from "@reef/proto"
import { executeContract } from "../contracts/execute.js"
import { genesisValue } from "../contracts/genesis.js"
import {
  type CoordinatorInput,
  type CoordinatorOutput,
  type CoordinatorParams,
  type CoordinatorState,
  createCoordinator,
  stepCoordinator
} from "../core/coordinator.js"
import { Prng } from "../core/prng.js"
import { COORDINATOR_SOURCE, type Key, type TxMeta, type TxOutcome, type WorkerId } from "../core/types.js"
import { createWorker, stepWorker, type WorkerInput, type WorkerOutput, type WorkerState } from "../core/worker.js"
import { admit } from "../tx/transaction.js"
import { bodySource, fakeSigner, fakeVerify, transactionStream, type WorkloadSpec } from "../workload/generators.js"
import { EventQueue } from "./event-queue.js"

/** The simulated workers never restart: each lives one incarnation. */
const SIM_INCARNATION = "1"
const refs = (ids: ReadonlyArray<WorkerId>) => ids.map((id) => ({ id, incarnation: SIM_INCARNATION }))

export interface SimConfig {
  readonly scenario: string
  readonly seed: number
  readonly workers: number
  /** Workers that join after `joinAtMs` (scale-out: they start with no objects). */
  readonly lateWorkers: number
  readonly joinAtMs: number
  readonly cores: number
  readonly txs: number
  /** Mean gap between client transactions (ms). */
  readonly arrivalGapMs: number
  /** Closed loop instead: this many transactions outstanding (the first ones `arrivalGapMs` apart), a new one
   *  arriving as each one's receipt comes. */
  readonly outstanding?: number
  readonly workload: WorkloadSpec
  readonly invalidShare: number
  readonly coordinator: CoordinatorParams
  readonly blockIntervalMs: number
  readonly maxBlockTxs: number
  /** The consensus window: a proposal is decided this long after it is made, give or take the jitter. */
  readonly windowMs: number
  readonly windowJitterMs: number
  readonly rejectRate: number
  readonly netDelayMs: readonly [number, number]
  readonly duplicateRate: number
  /** Per worker: how much longer its units take than their synthetic cost. */
  readonly slowFactor: ReadonlyArray<number>
  readonly retryAfterMs: number
  readonly maxTimeMs: number
}

export type StepCoordinator = typeof stepCoordinator
export type StepWorker = typeof stepWorker

/** Replacements for the real steps: deliberately broken variants (mutants.ts). */
export interface SimHooks {
  readonly stepCoordinator?: StepCoordinator
  readonly stepWorker?: StepWorker
}

type Tx = TxMeta<Transaction>

type Event =
  | { readonly k: "arrive" }
  | { readonly k: "block" }
  | { readonly k: "decide"; readonly proposal: number; readonly reject: boolean }
  | { readonly k: "coordinator"; readonly input: CoordinatorInput<Transaction> }
  | { readonly k: "worker"; readonly worker: WorkerId; readonly input: WorkerInput<Transaction> }
  | { readonly k: "join"; readonly worker: WorkerId }
  | { readonly k: "tick" }

/** A copy of an object version seen somewhere: produced by an execution, or carried by a transfer. */
export interface VersionCopy {
  readonly key: Key
  readonly version: number
  readonly value: Uint8Array
  readonly where: string
}

/** What a run did, for the checker. */
export interface SimRecord {
  readonly config: SimConfig
  /** Committed transactions by seq (index seq - 1), in consensus order. */
  readonly committed: Array<Tx>
  /** How often each transaction id was committed. */
  readonly commitCount: Map<string, number>
  readonly submitted: Set<string>
  /** Stateful executions reported by workers, per seq (exactly once is Theorem 3). */
  readonly executions: Map<number, number>
  /** Receipts produced by the coordinator, per seq, with their outcome and when the first came (virtual ms). */
  readonly receipts: Map<number, { readonly count: number; readonly status: TxOutcome; readonly atMs: number }>
  /** When each transaction reached the coordinator's pool (virtual ms), by id. */
  readonly arrivedAtMs: Map<string, number>
  /** Per key: the (seq, version) every execution consumed. */
  readonly consumed: Map<Key, Array<{ readonly seq: number; readonly version: number }>>
  readonly copies: Array<VersionCopy>
  readonly workers: ReadonlyMap<WorkerId, WorkerState<Transaction>>
  readonly coordinator: CoordinatorState<Transaction>
  /** Set when the run ended with work left (Theorem 3's "eventually") or a core threw. */
  finishedAtMs: number | undefined
  crash: string | undefined
  messages: number
  duplicatesSent: number
}

const workerIds = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => `w${i + 1 + offset}`)

export const verifyInSim = (tx: Transaction): boolean => fakeVerify(tx)

export const executeInSim = (tx: Transaction, read: (key: Key) => Uint8Array) => {
  const outcome = executeContract(tx, read)
  return outcome.status === "executed"
    ? { status: "executed" as const, writes: outcome.writes, detail: "" }
    : { status: "aborted" as const, detail: outcome.detail }
}

export const runWorld = (config: SimConfig, hooks: SimHooks = {}): SimRecord => {
  const prng = new Prng(config.seed)
  const net = prng.fork()
  const consensus = prng.fork()
  const clients = prng.fork()
  const q = new EventQueue<Event>()
  const stepC = hooks.stepCoordinator ?? stepCoordinator
  const stepW = hooks.stepWorker ?? stepWorker
  const coordinator = createCoordinator<Transaction>(config.coordinator)
  const workers = new Map<WorkerId, WorkerState<Transaction>>()
  const initial = workerIds(config.workers)
  const late = workerIds(config.lateWorkers, config.workers)
  const slow = new Map<WorkerId, number>()
  ;[...initial, ...late].forEach((w, i) => {
    slow.set(w, config.slowFactor[i] ?? 1)
  })
  const record: SimRecord = {
    config,
    committed: [],
    commitCount: new Map(),
    submitted: new Set(),
    executions: new Map(),
    receipts: new Map(),
    arrivedAtMs: new Map(),
    consumed: new Map(),
    copies: [],
    workers,
    coordinator,
    finishedAtMs: undefined,
    crash: undefined,
    messages: 0,
    duplicatesSent: 0
  }
  const nextTx = transactionStream(
    bodySource(config.workload, clients.fork()),
    fakeSigner,
    clients.fork(),
    config.invalidShare,
    "tx"
  )
  const mempool: Array<Tx> = []
  let arrived = 0
  let proposals = 0
  let done = false
  const closedLoop = config.outstanding !== undefined

  const addWorker = (id: WorkerId) =>
    workers.set(
      id,
      createWorker<Transaction>({
        self: id,
        incarnation: SIM_INCARNATION,
        cores: config.cores,
        retryAfterMs: config.retryAfterMs,
        tokenTtlMs: 60_000,
        genesis: genesisValue,
        execute: executeInSim,
        symmetricPolicy: "round-robin",
        observe: true
      })
    )

  /** A message over the network: a random delay (so reordering), sometimes delivered twice. */
  const send = (event: Event) => {
    record.messages++
    const [lo, hi] = config.netDelayMs
    q.after(lo + net.float() * (hi - lo), event)
    if (net.chance(config.duplicateRate)) {
      record.duplicatesSent++
      q.after(lo + net.float() * (hi - lo) * 3, event)
    }
  }

  const toCoordinator = (input: CoordinatorInput<Transaction>) => send({ k: "coordinator", input })
  const toWorker = (worker: WorkerId, input: WorkerInput<Transaction>) => send({ k: "worker", worker, input })

  const onCoordinatorOutputs = (out: ReadonlyArray<CoordinatorOutput<Transaction>>) => {
    for (const o of out) {
      switch (o._tag) {
        case "SendStateless":
          toWorker(o.worker, { _tag: "Stateless", tasks: o.tasks })
          break
        case "SendStateful":
          toWorker(o.worker, {
            _tag: "Stateful",
            tasks: o.tasks.map((t) => ({ ...t, trace: "", incarnation: o.incarnation }))
          })
          break
        case "SendSymmetric":
          for (const w of o.workers) {
            toWorker(w, {
              _tag: "Symmetric",
              block: {
                firstSeq: o.firstSeq,
                height: o.height,
                txs: o.txs,
                workers: o.workers,
                watermark: o.watermark,
                schedulingCostUs: o.schedulingCostUs
              }
            })
          }
          break
        case "Committed":
          for (let i = 0; i < o.txs.length; i++) {
            const tx = o.txs[i]!
            record.committed[o.firstSeq - 1 + i] = tx
            record.commitCount.set(tx.id, (record.commitCount.get(tx.id) ?? 0) + 1)
          }
          break
        case "Rejected":
          mempool.unshift(...o.txs)
          break
        case "Completed": {
          const prior = record.receipts.get(o.seq)
          if (prior === undefined && closedLoop && arrived < config.txs) q.after(0, { k: "arrive" })
          record.receipts.set(o.seq, { count: (prior?.count ?? 0) + 1, status: o.status, atMs: prior?.atMs ?? q.now })
          break
        }
        case "SendObject": {
          const value = o.value === "genesis" ? genesisValue(o.key) : undefined
          if (value !== undefined) record.copies.push({ key: o.key, version: o.version, value, where: "coordinator" })
          toWorker(o.to, { _tag: "ObjectArrived", key: o.key, version: o.version, value, from: COORDINATOR_SOURCE })
          break
        }
        case "Planned":
          break
      }
    }
  }

  const stepCoordinatorWith = (input: CoordinatorInput<Transaction>) => onCoordinatorOutputs(stepC(coordinator, input))

  const onWorkerOutputs = (self: WorkerId, out: ReadonlyArray<WorkerOutput<Transaction>>) => {
    const completions: Array<{ seq: number; status: TxOutcome; leaseTransfers: number; detail: string }> = []
    let statelessDoneUs = 0
    for (const o of out) {
      switch (o._tag) {
        case "StartUnit": {
          const valid = o.verify === undefined ? true : verifyInSim(o.verify)
          const ms = (o.costUs / 1000) * (slow.get(self) ?? 1)
          q.after(ms, { k: "worker", worker: self, input: { _tag: "UnitDone", unit: o.unit, valid } })
          break
        }
        case "RequestObject":
          if (o.to === COORDINATOR_SOURCE) {
            toCoordinator({ _tag: "ObjectRequest", key: o.key, version: o.version, requester: self })
          } else {
            toWorker(o.to, { _tag: "ObjectRequest", key: o.key, version: o.version, requester: self, trace: o.trace })
          }
          break
        case "SendObject":
          if (o.value !== undefined)
            record.copies.push({ key: o.key, version: o.version, value: o.value, where: `${self}->${o.to}` })
          toWorker(o.to, { _tag: "ObjectArrived", key: o.key, version: o.version, value: o.value, from: self })
          break
        case "RequestToken":
          toWorker(o.to, { _tag: "TokenRequest", txId: o.txId, requester: self })
          break
        case "SendToken":
          toWorker(o.to, { _tag: "TokenArrived", txId: o.txId, valid: o.valid })
          break
        case "Completed":
          record.executions.set(o.seq, (record.executions.get(o.seq) ?? 0) + 1)
          completions.push({ seq: o.seq, status: o.status, leaseTransfers: o.leaseTransfers, detail: o.detail })
          break
        case "StatelessDone":
          statelessDoneUs += Math.max(1, o.costUs)
          break
        case "Consumed": {
          let list = record.consumed.get(o.key)
          if (list === undefined) {
            list = []
            record.consumed.set(o.key, list)
          }
          list.push({ seq: o.seq, version: o.version })
          break
        }
        case "Produced":
          record.copies.push({ key: o.key, version: o.version, value: o.value, where: `${self} (seq ${o.seq})` })
          break
      }
    }
    if (completions.length > 0 || statelessDoneUs > 0) {
      toCoordinator({
        _tag: "Report",
        worker: self,
        incarnation: SIM_INCARNATION,
        completions,
        statelessDoneUs,
        generation: 0
      })
    }
  }

  const isDone = () =>
    arrived === config.txs &&
    mempool.length === 0 &&
    coordinator.pending.length === 0 &&
    coordinator.awaiting.length === 0 &&
    coordinator.inflight.size === 0

  const handle = (e: Event) => {
    switch (e.k) {
      case "arrive": {
        const { tx } = nextTx()
        const a = admit(tx)
        if (!a.ok) throw new Error(`generated transaction not admitted: ${a.rejection.message}`)
        mempool.push(a.meta as Tx)
        record.submitted.add(a.meta.id)
        record.arrivedAtMs.set(a.meta.id, q.now)
        arrived++
        if (!closedLoop && arrived < config.txs) q.after(clients.float() * 2 * config.arrivalGapMs, { k: "arrive" })
        break
      }
      case "block": {
        if (mempool.length > 0) {
          const txs = mempool.splice(0, config.maxBlockTxs)
          const proposal = ++proposals
          stepCoordinatorWith({ _tag: "Propose", block: { proposal, digest: `p${proposal}`, txs } })
          stepCoordinatorWith({ _tag: "Plan", proposal })
          const reject = consensus.chance(config.rejectRate)
          const jitter = (consensus.float() * 2 - 1) * config.windowJitterMs
          q.after(Math.max(0, config.windowMs + jitter), { k: "decide", proposal, reject })
        }
        if (!done) q.after(config.blockIntervalMs, { k: "block" })
        break
      }
      case "decide":
        stepCoordinatorWith(
          e.reject ? { _tag: "Reject", proposal: e.proposal } : { _tag: "Commit", proposal: e.proposal }
        )
        break
      case "coordinator":
        stepCoordinatorWith(e.input)
        break
      case "worker": {
        const w = workers.get(e.worker)
        if (w === undefined) throw new Error(`message for unknown worker ${e.worker}`)
        onWorkerOutputs(e.worker, stepW(w, e.input))
        break
      }
      case "join":
        addWorker(e.worker)
        stepCoordinatorWith({ _tag: "Workers", workers: refs([...workers.keys()]) })
        break
      case "tick":
        for (const [id, w] of workers) onWorkerOutputs(id, stepW(w, { _tag: "Tick", nowMs: q.now }))
        if (!done) q.after(20, { k: "tick" })
        break
    }
  }

  try {
    for (const id of initial) addWorker(id)
    stepCoordinatorWith({ _tag: "Workers", workers: refs(initial) })
    for (const id of late) q.at(config.joinAtMs, { k: "join", worker: id })
    for (let i = 0; i < Math.min(config.txs, config.outstanding ?? 1); i++) {
      q.at(closedLoop ? i * config.arrivalGapMs : 0, { k: "arrive" })
    }
    q.at(config.blockIntervalMs, { k: "block" })
    q.at(20, { k: "tick" })
    let drained = 0
    for (let e = q.pop(); e !== undefined; e = q.pop()) {
      if (!done && q.now > config.maxTimeMs) break
      handle(e)
      if (!done && isDone()) {
        done = true
        record.finishedAtMs = q.now
      }
      // After the end, deliver what is still in flight (late duplicates), then stop.
      if (done && ++drained > 100_000) break
    }
  } catch (e) {
    record.crash = e instanceof Error ? e.message : String(e)
  }
  return record
}
