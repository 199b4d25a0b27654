/**
 * One simulated Remora validator (TigerBeetle VOPR style): the real coordinator and worker cores, driven by a
 * seeded event queue that plays clients, consensus (a window that may reject proposals or commit them out of
 * order), the network (delays, reordering, duplicates, loss, NATS server restarts), slow workers, and crashes:
 *
 * - a worker is killed (its whole state is lost: the real worker keeps nothing on disk) and restarted as a new
 *   incarnation; membership shows the restart, or that it left, after a delay, as presence does;
 * - the coordinator is killed (between two steps, or between two outputs of a step) and restarted from exactly
 *   what its shell writes to disk (`durable.ts`), with its shell modelled in `coordinator-process.ts`;
 * - clients resubmit what has no receipt yet (the same id), so a coordinator that forgot an id shows it.
 *
 * Messages are addressed by worker id, like NATS subjects: one in flight when a worker restarts reaches the
 * new incarnation. Everything a run does follows from its configuration and seed; the checker (checker.ts)
 * compares what the cores did with the sequential reference executor.
 */
import type { Transaction } from "@reef/proto"
import { executeContract } from "../contracts/execute.js"
import { genesisValue } from "../contracts/genesis.js"
import type { CoordinatorOutput, CoordinatorParams, CoordinatorState } from "../core/coordinator.js"
import { stepCoordinator } from "../core/coordinator.js"
import { Prng } from "../core/prng.js"
import { COORDINATOR_SOURCE, type Key, type TxMeta, type TxOutcome, type WorkerId } from "../core/types.js"
import { createWorker, stepWorker, type WorkerInput, type WorkerOutput, type WorkerState } from "../core/worker.js"
import { admit } from "../tx/transaction.js"
import { bodySource, fakeSigner, fakeVerify, transactionStream, type WorkloadSpec } from "../workload/generators.js"
import { CoordinatorProcess } from "./coordinator-process.js"
import { SimDisk, type SimReceipt } from "./durable.js"
import { EventQueue } from "./event-queue.js"
import type { Violation } from "./violation.js"

/** Kills and restarts (and what they need: membership, shell timers, retrying clients). */
export interface CrashFaults {
  /** Kills and outages happen before this time; after it only restarts of what is down (A8: faults stop). */
  readonly untilMs: number
  /** Mean gap between kills of a random live worker (0: none). */
  readonly workerKillGapMs: number
  /** Mean gap between coordinator kills (0: none). */
  readonly coordinatorKillGapMs: number
  /** Share of coordinator kills that land between two outputs of a step rather than between steps. */
  readonly midStepKillShare: number
  /** A killed process comes back after a delay in this range (ms). */
  readonly restartDelayMs: readonly [number, number]
  /** Membership: a (re)started worker is seen this long after it starts. */
  readonly presenceDelayMs: number
  /** A dead worker not back for this long is seen as LEFT. */
  readonly presenceTimeoutMs: number
  /** Mean gap between NATS server restarts (0: none); each loses every message in flight for `outageMs`. */
  readonly outageGapMs: number
  readonly outageMs: number
  /** Random message loss (a slow consumer dropped, a lost buffer). */
  readonly lossRate: number
  /** The coordinator shell's stall backstop and epoch timer (0: off). */
  readonly stallRecoveryMs: number
  readonly epochMs: number
  /** A client asks again (same id) after this long without a receipt. */
  readonly clientRetryMs: number
  /**
   * Mean gap between pauses (SIGSTOP ... SIGCONT) of a random process (0: none): a paused process handles
   * nothing until it resumes, then everything that reached it, in order; a pause longer than
   * `presenceTimeoutMs` makes a worker LEFT until it is seen again (the same incarnation).
   */
  readonly pauseGapMs: number
  readonly pauseMs: readonly [number, number]
  /** Share of pauses that stop the coordinator rather than a worker. */
  readonly coordinatorPauseShare: number
  /** Messages that reach a paused process are lost (NATS cuts off a slow consumer) rather than queued. */
  readonly pauseLoss: boolean
}

/** Elasticity (§4.7): workers retired (Alg. 5) and spares joining at random points, also during recoveries. */
export interface ElasticChanges {
  /** Changes happen before this time, a mean `gapMs` apart. */
  readonly untilMs: number
  readonly gapMs: number
  /** Workers that may join (never seen before: no objects), after the initial and late ones. */
  readonly spares: number
}

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
  /** Crashes and restarts (none when absent: every process lives one incarnation). */
  readonly crashes?: CrashFaults
  /** Scale-in and scale-out (none when absent). */
  readonly elastic?: ElasticChanges
}

export type StepCoordinator = typeof stepCoordinator
export type StepWorker = typeof stepWorker

/** Replacements for the real parts: deliberately broken variants (mutants.ts). */
export interface SimHooks {
  readonly stepCoordinator?: StepCoordinator
  readonly stepWorker?: StepWorker
  /** The coordinator shell's seen-id set lives in memory only (not rebuilt from its disk on restart). */
  readonly volatileSeenIds?: boolean
  /** The state is read as soon as the coordinator is idle, whatever generation the workers are at. */
  readonly readStateWhenIdle?: boolean
  /** The stall backstop sees progress in the watermark only and never backs off. */
  readonly stallWatermarkOnly?: boolean
}

type Tx = TxMeta<Transaction>

type Event =
  | { readonly k: "arrive" }
  | { readonly k: "resubmit"; readonly id: string }
  | { readonly k: "block" }
  | { readonly k: "decide"; readonly proposal: number; readonly reject: boolean; readonly coordinator: number }
  | { readonly k: "coordinator"; readonly input: Parameters<CoordinatorProcess<Transaction>["feed"]>[0] }
  | { readonly k: "worker"; readonly worker: WorkerId; readonly input: WorkerInput<Transaction> }
  /** A virtual core of one incarnation finished a unit (local: never reaches another incarnation). */
  | {
      readonly k: "unit"
      readonly worker: WorkerId
      readonly incarnation: string
      readonly input: WorkerInput<Transaction>
    }
  | { readonly k: "join"; readonly worker: WorkerId }
  | { readonly k: "tick" }
  | { readonly k: "shell-timer" }
  | { readonly k: "end-epoch" }
  | { readonly k: "kill-worker" }
  | { readonly k: "restart-worker"; readonly worker: WorkerId }
  | { readonly k: "presence"; readonly worker: WorkerId; readonly incarnation: string; readonly up: boolean }
  | { readonly k: "kill-coordinator" }
  | { readonly k: "restart-coordinator" }
  | { readonly k: "coordinator-membership"; readonly coordinator: number }
  | { readonly k: "outage" }
  | { readonly k: "pause" }
  | { readonly k: "elastic" }

/** A copy of an object version seen somewhere: produced by an execution, or carried by a transfer. */
export interface VersionCopy {
  readonly key: Key
  readonly version: number
  readonly value: Uint8Array
  readonly where: string
}

export interface CrashStats {
  workerKills: number
  coordinatorKills: number
  midStepKills: number
  pauses: number
  outages: number
  lost: number
  recoveries: number
  replayed: number
  epochsPersisted: number
  resubmissions: number
  /** Elasticity: workers retired gracefully (their process stopped) and spares that joined. */
  retired: number
  joined: number
}

/** What a run did, for the checker. */
export interface SimRecord {
  readonly config: SimConfig
  /** Committed transactions by seq (index seq - 1), in consensus order: the chain as written to disk. */
  readonly committed: Array<Tx>
  /** How often each transaction id was committed (in how many blocks of the chain). */
  readonly commitCount: Map<string, number>
  /** Every block written, by height: its first seq and ids. */
  readonly chain: Map<number, { readonly firstSeq: number; readonly ids: ReadonlyArray<string> }>
  readonly submitted: Set<string>
  /** Stateful executions reported by workers, per seq (more than one only after a recovery replayed it). */
  readonly executions: Map<number, number>
  /** Per seq, the first execution's outcome and versions: every re-execution must match it (Lemma 8). */
  readonly executionSignatures: Map<number, string>
  /** Receipts given (on disk, answered), per seq, with their outcome and when the first came (virtual ms). */
  readonly receipts: Map<number, { readonly count: number; readonly status: TxOutcome; readonly atMs: number }>
  /** Every receipt given, by id (the first one given). */
  readonly givenReceipts: Map<string, SimReceipt>
  /** The receipt each client ended with, by id. */
  readonly clientReceipts: Map<string, SimReceipt>
  /** When each transaction reached the coordinator's pool (virtual ms), by id. */
  readonly arrivedAtMs: Map<string, number>
  /** Per key: the (seq, version) every execution consumed. */
  readonly consumed: Map<Key, Array<{ readonly seq: number; readonly version: number }>>
  readonly copies: Array<VersionCopy>
  /** The live workers at the end (a killed one is gone, a restarted one is its last incarnation). */
  readonly workers: Map<WorkerId, WorkerState<Transaction>>
  /** The coordinator's last incarnation. */
  coordinator: CoordinatorState<Transaction>
  readonly disk: SimDisk<Transaction>
  /** Violations seen while running (a receipt changed, a re-execution differed); the first one is reported. */
  readonly online: Array<Violation>
  readonly crashStats: CrashStats
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

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex")

const sameReceipt = (a: SimReceipt, b: SimReceipt) =>
  a.txId === b.txId &&
  a.seq === b.seq &&
  a.height === b.height &&
  a.status === b.status &&
  a.detail === b.detail &&
  a.worker === b.worker &&
  a.leaseTransfers === b.leaseTransfers

export const describeReceipt = (r: SimReceipt) =>
  `seq ${r.seq} height ${r.height} ${r.status}${r.detail === "" ? "" : ` (${r.detail})`} by ${r.worker}`

interface WorkerProcess {
  readonly state: WorkerState<Transaction>
  readonly incarnation: string
  /** The fence generation its unsent completions were executed under (the shell's report field). */
  generation: number
}

export const runWorld = (config: SimConfig, hooks: SimHooks = {}): SimRecord => {
  const prng = new Prng(config.seed)
  const net = prng.fork()
  const consensus = prng.fork()
  const clients = prng.fork()
  const crashes = config.crashes
  // Drawn only with crashes, so runs without them are the runs they always were.
  const faults = crashes === undefined ? undefined : prng.fork()
  const elastic = config.elastic === undefined ? undefined : prng.fork()
  const q = new EventQueue<Event>()
  const stepW = hooks.stepWorker ?? stepWorker
  const disk = new SimDisk<Transaction>()
  const processes = new Map<WorkerId, WorkerProcess | undefined>()
  const initial = workerIds(config.workers)
  const late = workerIds(config.lateWorkers, config.workers)
  const spares = workerIds(config.elastic?.spares ?? 0, config.workers + config.lateWorkers)
  /** Incarnations retired gracefully (`id@incarnation`): their process stopped, they never get work again. */
  const retired = new Set<string>()
  const slow = new Map<WorkerId, number>()
  ;[...initial, ...late].forEach((w, i) => {
    slow.set(w, config.slowFactor[i] ?? 1)
  })
  const record: SimRecord = {
    config,
    committed: [],
    commitCount: new Map(),
    chain: new Map(),
    submitted: new Set(),
    executions: new Map(),
    executionSignatures: new Map(),
    receipts: new Map(),
    givenReceipts: new Map(),
    clientReceipts: new Map(),
    arrivedAtMs: new Map(),
    consumed: new Map(),
    copies: [],
    workers: new Map(),
    coordinator: undefined as unknown as CoordinatorState<Transaction>,
    disk,
    online: [],
    crashStats: {
      workerKills: 0,
      coordinatorKills: 0,
      midStepKills: 0,
      pauses: 0,
      outages: 0,
      lost: 0,
      recoveries: 0,
      replayed: 0,
      epochsPersisted: 0,
      resubmissions: 0,
      retired: 0,
      joined: 0
    },
    finishedAtMs: undefined,
    crash: undefined,
    messages: 0,
    duplicatesSent: 0
  }
  const violation = (v: Violation) => {
    if (record.online.length < 16) record.online.push(v)
  }
  const nextTx = transactionStream(
    bodySource(config.workload, clients.fork()),
    fakeSigner,
    clients.fork(),
    config.invalidShare,
    "tx"
  )
  /** Every transaction a client made, by id (a client resubmits the same one until it has a receipt). */
  const made = new Map<string, Tx>()
  let arrived = 0
  let done = false
  const closedLoop = config.outstanding !== undefined

  // ---- membership (presence), as the coordinator sees it -------------------------------------------------
  const members = new Map<WorkerId, { incarnation: string; up: boolean }>()
  const incarnations = new Map<WorkerId, number>()
  const activeRefs = () =>
    [...members]
      .filter(([, m]) => m.up)
      .map(([id, m]) => ({ id, incarnation: m.incarnation }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

  /** Paused processes (a worker id, or "coordinator"), until when. */
  const pausedUntil = new Map<string, number>()
  const pausedAt = (target: string): number | undefined => {
    const until = pausedUntil.get(target)
    return until !== undefined && until > q.now ? until : undefined
  }
  const COORDINATOR = "coordinator"

  // ---- the network ---------------------------------------------------------------------------------------
  const outages: Array<readonly [number, number]> = []
  const inOutage = (t: number) => outages.some(([from, to]) => t >= from && t < to)

  /** A message over the network: a random delay (so reordering), sometimes twice, sometimes never. */
  const send = (event: Event) => {
    record.messages++
    const [lo, hi] = config.netDelayMs
    const deliver = (delay: number) => {
      const lost =
        crashes !== undefined &&
        (inOutage(q.now) || inOutage(q.now + delay) || (q.now < crashes.untilMs && faults!.chance(crashes.lossRate)))
      if (lost) {
        record.crashStats.lost++
        return
      }
      q.after(delay, event)
    }
    deliver(lo + net.float() * (hi - lo))
    if (net.chance(config.duplicateRate)) {
      record.duplicatesSent++
      deliver(lo + net.float() * (hi - lo) * 3)
    }
  }

  const toCoordinator = (input: Parameters<CoordinatorProcess<Transaction>["feed"]>[0]) =>
    send({ k: "coordinator", input })
  const toWorker = (worker: WorkerId, input: WorkerInput<Transaction>) => send({ k: "worker", worker, input })

  // ---- the coordinator process -----------------------------------------------------------------------------
  let coordinator: CoordinatorProcess<Transaction> | undefined
  let coordinatorIncarnation = 0

  const onCoordinatorOutput = (o: CoordinatorOutput<Transaction>) => {
    if ((o._tag === "SendStateless" || o._tag === "SendStateful") && retired.has(`${o.worker}@${o.incarnation}`)) {
      violation({
        property: "retired gets no work",
        message: `${o._tag} to ${o.worker}@${o.incarnation} after it retired`
      })
    }
    switch (o._tag) {
      case "Retired":
        // Shutdown: the process stops (as `reef run worker` on SIGTERM); presence sees it leave.
        if (!o.left && processes.get(o.worker)?.incarnation === o.incarnation) {
          retired.add(`${o.worker}@${o.incarnation}`)
          processes.set(o.worker, undefined)
          record.workers.delete(o.worker)
          pausedUntil.delete(o.worker)
          record.crashStats.retired++
          q.after(crashes?.presenceTimeoutMs ?? 1, {
            k: "presence",
            worker: o.worker,
            incarnation: o.incarnation,
            up: false
          })
        }
        break
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
      case "SendObject": {
        const value = o.value === "genesis" ? genesisValue(o.key) : o.value === "missing" ? undefined : o.value
        if (value !== undefined) record.copies.push({ key: o.key, version: o.version, value, where: "coordinator" })
        toWorker(o.to, { _tag: "ObjectArrived", key: o.key, version: o.version, value, from: COORDINATOR_SOURCE })
        break
      }
      case "Persist":
        for (const obj of o.objects) {
          record.copies.push({ key: obj.key, version: obj.version, value: obj.value, where: `snapshot ${o.epoch}` })
        }
        break
      case "Recovered":
        record.crashStats.recoveries++
        record.crashStats.replayed += o.toSeq - o.fromSeq + 1
        break
      case "EpochPersisted":
        record.crashStats.epochsPersisted++
        break
      default:
        break
    }
  }

  const onAppended = (height: number, firstSeq: number, txs: ReadonlyArray<Tx>) => {
    const ids = txs.map((t) => t.id)
    const before = record.chain.get(height)
    if (before !== undefined) {
      if (before.firstSeq !== firstSeq || before.ids.join() !== ids.join()) {
        violation({ property: "committed once", message: `height ${height} written twice with different blocks` })
      }
      return
    }
    record.chain.set(height, { firstSeq, ids })
    for (let i = 0; i < txs.length; i++) {
      const tx = txs[i]!
      const prior = record.committed[firstSeq - 1 + i]
      if (prior !== undefined && prior.id !== tx.id) {
        violation({ property: "committed once", message: `seq ${firstSeq + i} is ${prior.id} and ${tx.id}` })
      }
      record.committed[firstSeq - 1 + i] = tx
      record.commitCount.set(tx.id, (record.commitCount.get(tx.id) ?? 0) + 1)
    }
  }

  const clientGot = (r: SimReceipt) => {
    const prior = record.clientReceipts.get(r.txId)
    if (prior !== undefined) {
      if (!sameReceipt(prior, r)) {
        violation({
          property: "receipts stable",
          message: `${r.txId}: a client got ${describeReceipt(prior)}, later ${describeReceipt(r)}`
        })
      }
      return
    }
    record.clientReceipts.set(r.txId, r)
    if (closedLoop && arrived < config.txs) q.after(0, { k: "arrive" })
  }

  const onGave = (r: SimReceipt, waited: boolean) => {
    const prior = record.givenReceipts.get(r.txId)
    if (prior !== undefined && !sameReceipt(prior, r)) {
      violation({
        property: "receipts stable",
        message: `${r.txId} was given ${describeReceipt(prior)}, then ${describeReceipt(r)}`
      })
    }
    if (prior === undefined) record.givenReceipts.set(r.txId, r)
    const seqReceipt = record.receipts.get(r.seq)
    record.receipts.set(r.seq, {
      count: (seqReceipt?.count ?? 0) + 1,
      status: r.status,
      atMs: seqReceipt?.atMs ?? q.now
    })
    // Open loop without crashes: every receipt reaches its client (nobody retries, nothing is lost).
    if (waited || crashes === undefined) clientGot(r)
  }

  const startCoordinator = () => {
    coordinatorIncarnation++
    const process = new CoordinatorProcess<Transaction>(
      coordinatorIncarnation,
      config.coordinator,
      disk,
      {
        stallRecoveryMs: crashes?.stallRecoveryMs ?? 0,
        volatileSeenIds: hooks.volatileSeenIds === true,
        stallWatermarkOnly: hooks.stallWatermarkOnly === true
      },
      {
        toWorker,
        gave: onGave,
        appended: onAppended,
        mismatch: (given, again) =>
          violation({
            property: "receipts stable",
            message: `${given.txId} re-executed as seq ${again.seq} ${again.status}${again.detail === "" ? "" : ` (${again.detail})`}; its receipt says ${describeReceipt(given)}`
          }),
        output: onCoordinatorOutput
      },
      hooks.stepCoordinator ?? stepCoordinator,
      q.now
    )
    coordinator = process
    record.coordinator = process.core
  }

  // ---- workers ---------------------------------------------------------------------------------------------
  const startWorker = (id: WorkerId): string => {
    const n = (incarnations.get(id) ?? 0) + 1
    incarnations.set(id, n)
    const incarnation = String(n)
    const state = createWorker<Transaction>({
      self: id,
      incarnation,
      cores: config.cores,
      retryAfterMs: config.retryAfterMs,
      tokenTtlMs: 60_000,
      genesis: genesisValue,
      execute: executeInSim,
      symmetricPolicy: "round-robin",
      observe: true
    })
    processes.set(id, { state, incarnation, generation: 0 })
    record.workers.set(id, state)
    return incarnation
  }

  /** Per seq being executed in this step: the versions it consumed and produced, for its signature. */
  const executing = new Map<number, Array<string>>()

  const onWorkerOutputs = (self: WorkerId, p: WorkerProcess, out: ReadonlyArray<WorkerOutput<Transaction>>) => {
    let completions: Array<{ seq: number; status: TxOutcome; leaseTransfers: number; detail: string }> = []
    let statelessDoneUs = 0
    const report = () => {
      if (completions.length === 0 && statelessDoneUs === 0) return
      toCoordinator({
        _tag: "Report",
        worker: self,
        incarnation: p.incarnation,
        completions,
        statelessDoneUs,
        generation: p.generation
      })
      completions = []
      statelessDoneUs = 0
    }
    for (const o of out) {
      switch (o._tag) {
        case "StartUnit": {
          const valid = o.verify === undefined ? true : verifyInSim(o.verify)
          const ms = (o.costUs / 1000) * (slow.get(self) ?? 1)
          q.after(ms, {
            k: "unit",
            worker: self,
            incarnation: p.incarnation,
            input: { _tag: "UnitDone", unit: o.unit, valid }
          })
          break
        }
        case "RequestObject":
          if (o.to === COORDINATOR_SOURCE) {
            toCoordinator({ _tag: "ObjectRequest", key: o.key, version: o.version, requester: self })
          } else {
            toWorker(o.to, {
              _tag: "ObjectRequest",
              key: o.key,
              version: o.version,
              requester: self,
              trace: o.trace,
              generation: p.state.generation
            })
          }
          break
        case "SendObject":
          if (o.value !== undefined)
            record.copies.push({ key: o.key, version: o.version, value: o.value, where: `${self}->${o.to}` })
          toWorker(o.to, {
            _tag: "ObjectArrived",
            key: o.key,
            version: o.version,
            value: o.value,
            from: self,
            generation: o.generation
          })
          break
        case "RequestToken":
          toWorker(o.to, { _tag: "TokenRequest", txId: o.txId, requester: self })
          break
        case "SendToken":
          toWorker(o.to, { _tag: "TokenArrived", txId: o.txId, valid: o.valid })
          break
        case "Completed": {
          record.executions.set(o.seq, (record.executions.get(o.seq) ?? 0) + 1)
          const signature = `${o.status} ${o.detail} | ${(executing.get(o.seq) ?? []).join(" ")}`
          executing.delete(o.seq)
          const first = record.executionSignatures.get(o.seq)
          if (first === undefined) record.executionSignatures.set(o.seq, signature)
          else if (first !== signature) {
            violation({
              property: "Lemma 8",
              message: `seq ${o.seq} re-executed at ${self} differently: first [${first}], now [${signature}]`
            })
          }
          completions.push({ seq: o.seq, status: o.status, leaseTransfers: o.leaseTransfers, detail: o.detail })
          break
        }
        case "StatelessDone":
          statelessDoneUs += Math.max(1, o.costUs)
          break
        case "Fenced":
          // The shell sends what completed under the old generation under it, never under the new one.
          report()
          p.generation = o.generation
          break
        case "EpochReport":
          for (const obj of o.objects) {
            record.copies.push({ key: obj.key, version: obj.version, value: obj.value, where: `${self} report` })
          }
          toCoordinator({
            _tag: "EpochReport",
            worker: self,
            generation: o.generation,
            epoch: o.epoch,
            objects: o.objects
          })
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
        case "Produced": {
          record.copies.push({ key: o.key, version: o.version, value: o.value, where: `${self} (seq ${o.seq})` })
          let sig = executing.get(o.seq)
          if (sig === undefined) {
            sig = []
            executing.set(o.seq, sig)
          }
          sig.push(`${o.key}@${o.version}=${hex(o.value)}`)
          break
        }
      }
    }
    report()
  }

  const stepWorkerProcess = (id: WorkerId, p: WorkerProcess, input: WorkerInput<Transaction>) =>
    onWorkerOutputs(id, p, stepW(p.state, input))

  // ---- clients ---------------------------------------------------------------------------------------------
  const submit = (tx: Tx) => {
    const c = coordinator
    // A paused coordinator does not answer: the client's call times out and it asks again later.
    if (c === undefined || !c.alive || pausedAt(COORDINATOR) !== undefined) return
    const r = c.submit(tx, true)
    if (r.kind === "receipt") clientGot(r.receipt)
    else if (r.kind === "accepted") record.arrivedAtMs.set(tx.id, record.arrivedAtMs.get(tx.id) ?? q.now)
  }

  const isDone = () => {
    if (arrived < config.txs || coordinator === undefined || !coordinator.alive || !coordinator.idle) return false
    if (crashes === undefined) return true
    if (q.now < crashes.untilMs || coordinator.unavailable) return false
    // The state is read from the workers in membership and the coordinator: only once each of them is at the
    // coordinator's fence generation (one still at an older one holds objects a recovery took back: finding S3).
    const generation = coordinator.core.generation
    for (const [id, p] of processes) {
      if (p === undefined && retired.has(`${id}@${incarnations.get(id)}`)) continue
      if (p === undefined || (p.state.generation !== generation && hooks.readStateWhenIdle !== true)) return false
      const m = members.get(id)
      if (m === undefined || !m.up || m.incarnation !== p.incarnation) return false
    }
    for (const id of made.keys()) if (!record.clientReceipts.has(id)) return false
    return true
  }

  // ---- faults ----------------------------------------------------------------------------------------------
  const gap = (mean: number) => faults!.float() * 2 * mean
  const restartDelay = () => {
    const [lo, hi] = crashes!.restartDelayMs
    return lo + faults!.float() * (hi - lo)
  }

  const membershipChanged = () => {
    const c = coordinator
    const paused = pausedAt(COORDINATOR)
    // Membership events wait in a paused coordinator's queue; it reads the newest set when it resumes.
    if (paused !== undefined && c !== undefined)
      q.at(paused, { k: "coordinator-membership", coordinator: c.incarnation })
    else if (c?.alive) c.setWorkers(activeRefs())
  }

  /** The process an event is handled by, when a pause can hold it back. */
  const targetOf = (e: Event): string | undefined => {
    switch (e.k) {
      case "worker":
      case "unit":
        return e.worker
      case "coordinator":
      case "decide":
      case "block":
      case "shell-timer":
      case "end-epoch":
      case "coordinator-membership":
        return COORDINATOR
      default:
        return undefined
    }
  }

  const handle = (e: Event) => {
    switch (e.k) {
      case "arrive": {
        const { tx } = nextTx()
        const a = admit(tx)
        if (!a.ok) throw new Error(`generated transaction not admitted: ${a.rejection.message}`)
        const meta = a.meta as Tx
        made.set(meta.id, meta)
        record.submitted.add(meta.id)
        arrived++
        submit(meta)
        if (crashes !== undefined) q.after(crashes.clientRetryMs, { k: "resubmit", id: meta.id })
        if (!closedLoop && arrived < config.txs) q.after(clients.float() * 2 * config.arrivalGapMs, { k: "arrive" })
        break
      }
      case "resubmit": {
        if (record.clientReceipts.has(e.id) || done) break
        record.crashStats.resubmissions++
        submit(made.get(e.id)!)
        q.after(crashes!.clientRetryMs, { k: "resubmit", id: e.id })
        break
      }
      case "block": {
        const c = coordinator
        if (c?.alive) {
          const proposed = c.propose(config.maxBlockTxs)
          if (proposed !== undefined) {
            const reject = consensus.chance(config.rejectRate)
            const jitter = (consensus.float() * 2 - 1) * config.windowJitterMs
            q.after(Math.max(0, config.windowMs + jitter), {
              k: "decide",
              proposal: proposed.proposal,
              reject,
              coordinator: c.incarnation
            })
          }
        }
        if (!done) q.after(config.blockIntervalMs, { k: "block" })
        break
      }
      case "decide": {
        // The window consensus lives in the coordinator's process: a dead incarnation's proposals die with it.
        const c = coordinator
        if (c === undefined || !c.alive || c.incarnation !== e.coordinator) break
        c.feed(e.reject ? { _tag: "Reject", proposal: e.proposal } : { _tag: "Commit", proposal: e.proposal })
        break
      }
      case "coordinator":
        if (coordinator?.alive === true) coordinator.feed(e.input)
        break
      case "worker": {
        const p = processes.get(e.worker)
        if (p === undefined) {
          if (!processes.has(e.worker)) throw new Error(`message for unknown worker ${e.worker}`)
          break // nobody subscribed: lost
        }
        stepWorkerProcess(e.worker, p, e.input)
        break
      }
      case "unit": {
        const p = processes.get(e.worker)
        if (p !== undefined && p.incarnation === e.incarnation) stepWorkerProcess(e.worker, p, e.input)
        break
      }
      case "join": {
        const incarnation = startWorker(e.worker)
        members.set(e.worker, { incarnation, up: true })
        membershipChanged()
        break
      }
      case "tick":
        for (const [id, p] of processes) {
          if (p !== undefined && pausedAt(id) === undefined) stepWorkerProcess(id, p, { _tag: "Tick", nowMs: q.now })
        }
        if (!done) q.after(20, { k: "tick" })
        break
      case "shell-timer":
        if (coordinator?.alive === true) coordinator.timer(q.now)
        if (!done) q.after(200, { k: "shell-timer" })
        break
      case "end-epoch":
        if (coordinator?.alive === true) coordinator.feed({ _tag: "EndEpoch" })
        if (!done) q.after(crashes!.epochMs, { k: "end-epoch" })
        break
      case "kill-worker": {
        if (q.now >= crashes!.untilMs) break
        q.after(gap(crashes!.workerKillGapMs), { k: "kill-worker" })
        const live = [...processes].filter(([, p]) => p !== undefined).map(([id]) => id)
        if (live.length === 0) break
        const id = faults!.pick(live)
        const incarnation = processes.get(id)!.incarnation
        processes.set(id, undefined)
        pausedUntil.delete(id)
        record.workers.delete(id)
        record.crashStats.workerKills++
        q.after(restartDelay(), { k: "restart-worker", worker: id })
        q.after(crashes!.presenceTimeoutMs, { k: "presence", worker: id, incarnation, up: false })
        break
      }
      case "restart-worker": {
        const incarnation = startWorker(e.worker)
        q.after(crashes!.presenceDelayMs, { k: "presence", worker: e.worker, incarnation, up: true })
        break
      }
      case "presence": {
        const m = members.get(e.worker)
        if (e.up) {
          // The heartbeat of an incarnation that is still the one running (a later one may have replaced it).
          if (processes.get(e.worker)?.incarnation !== e.incarnation) break
          members.set(e.worker, { incarnation: e.incarnation, up: true })
        } else {
          if (m === undefined || m.incarnation !== e.incarnation || !m.up) break
          members.set(e.worker, { incarnation: e.incarnation, up: false })
        }
        membershipChanged()
        break
      }
      case "kill-coordinator": {
        if (q.now >= crashes!.untilMs) break
        q.after(gap(crashes!.coordinatorKillGapMs), { k: "kill-coordinator" })
        const c = coordinator
        if (c === undefined || !c.alive) break
        record.crashStats.coordinatorKills++
        if (faults!.chance(crashes!.midStepKillShare)) {
          // It dies inside its next step, after some of its outputs (or at the end of the step).
          record.crashStats.midStepKills++
          c.killAfter = faults!.int(0, 12)
        } else c.alive = false
        q.after(restartDelay(), { k: "restart-coordinator" })
        break
      }
      case "restart-coordinator": {
        const old = coordinator
        if (old !== undefined) old.alive = false
        pausedUntil.delete(COORDINATOR)
        startCoordinator()
        q.after(crashes!.presenceDelayMs, { k: "coordinator-membership", coordinator: coordinatorIncarnation })
        break
      }
      case "coordinator-membership":
        if (coordinator?.incarnation === e.coordinator) membershipChanged()
        break
      case "pause": {
        if (q.now >= crashes!.untilMs) break
        q.after(gap(crashes!.pauseGapMs), { k: "pause" })
        const [lo, hi] = crashes!.pauseMs
        const until = q.now + lo + faults!.float() * (hi - lo)
        if (faults!.chance(crashes!.coordinatorPauseShare)) {
          if (coordinator?.alive !== true || pausedAt(COORDINATOR) !== undefined) break
          pausedUntil.set(COORDINATOR, until)
        } else {
          const live = [...processes].filter(([id, p]) => p !== undefined && pausedAt(id) === undefined)
          if (live.length === 0) break
          const [id, p] = faults!.pick(live)
          pausedUntil.set(id, until)
          // No heartbeats while stopped: LEFT after the timeout, seen again once it runs.
          if (until - q.now > crashes!.presenceTimeoutMs) {
            q.after(crashes!.presenceTimeoutMs, { k: "presence", worker: id, incarnation: p!.incarnation, up: false })
            q.at(until + crashes!.presenceDelayMs, { k: "presence", worker: id, incarnation: p!.incarnation, up: true })
          }
        }
        record.crashStats.pauses++
        break
      }
      case "elastic": {
        const changes = config.elastic!
        if (q.now >= changes.untilMs) break
        q.after(elastic!.float() * 2 * changes.gapMs, { k: "elastic" })
        const c = coordinator
        if (c === undefined || !c.alive || pausedAt(COORDINATOR) !== undefined) break
        const spare = spares.find((id) => !processes.has(id))
        if (spare !== undefined && elastic!.chance(0.5)) {
          members.set(spare, { incarnation: startWorker(spare), up: true })
          record.crashStats.joined++
          membershipChanged()
          break
        }
        const live = [...processes].filter(([, p]) => p !== undefined).map(([id]) => id)
        if (live.length > 0) c.feed({ _tag: "Retire", worker: elastic!.pick(live), reason: "sim" })
        break
      }
      case "outage": {
        if (q.now >= crashes!.untilMs) break
        q.after(gap(crashes!.outageGapMs), { k: "outage" })
        outages.push([q.now, q.now + crashes!.outageMs])
        record.crashStats.outages++
        break
      }
    }
  }

  try {
    startCoordinator()
    for (const id of initial) members.set(id, { incarnation: startWorker(id), up: true })
    membershipChanged()
    for (const id of late) q.at(config.joinAtMs, { k: "join", worker: id })
    for (let i = 0; i < Math.min(config.txs, config.outstanding ?? 1); i++) {
      q.at(closedLoop ? i * config.arrivalGapMs : 0, { k: "arrive" })
    }
    q.at(config.blockIntervalMs, { k: "block" })
    q.at(20, { k: "tick" })
    if (crashes !== undefined) {
      q.at(200, { k: "shell-timer" })
      if (crashes.epochMs > 0) q.at(crashes.epochMs, { k: "end-epoch" })
      if (crashes.workerKillGapMs > 0) q.at(gap(crashes.workerKillGapMs), { k: "kill-worker" })
      if (crashes.coordinatorKillGapMs > 0) q.at(gap(crashes.coordinatorKillGapMs), { k: "kill-coordinator" })
      if (crashes.outageGapMs > 0) q.at(gap(crashes.outageGapMs), { k: "outage" })
      if (crashes.pauseGapMs > 0) q.at(gap(crashes.pauseGapMs), { k: "pause" })
    }
    if (config.elastic !== undefined) q.at(elastic!.float() * 2 * config.elastic.gapMs, { k: "elastic" })
    let drained = 0
    for (let e = q.pop(); e !== undefined; e = q.pop()) {
      if (!done && q.now > config.maxTimeMs) break
      const target = targetOf(e)
      const paused = target === undefined ? undefined : pausedAt(target)
      if (paused !== undefined) {
        if (crashes?.pauseLoss === true && (e.k === "worker" || e.k === "coordinator")) record.crashStats.lost++
        else q.at(paused, e)
        continue
      }
      handle(e)
      if (!done && isDone()) {
        done = true
        record.finishedAtMs = q.now
      }
      // After the end, deliver what is still in flight (late duplicates), then stop.
      if (done && ++drained > 100_000) break
    }
  } catch (e) {
    record.crash = e instanceof Error ? `${e.message}` : String(e)
  }
  return record
}
