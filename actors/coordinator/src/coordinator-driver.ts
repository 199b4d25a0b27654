/**
 * The coordinator's shell around its pure core (`@reef/remora/core` coordinator.ts). It owns the pool of
 * accepted transactions and forms blocks from it (every `blockIntervalMs`, or at once when a block is full),
 * proposes them to the ConsensusSource, feeds the core proposals, decisions, worker reports and object requests,
 * and carries out the core's outputs: stateless tasks and per-worker dispatch batches as batched tells,
 * receipts, commit events.
 *
 * Spans (when tracing is on): one `remora.consensus_window` per proposal, from proposal to decision, with the
 * stateless routing (`remora.stateless`) and the window's scheduling (`remora.schedule`) as children and one
 * `remora.dispatch` per worker batch at commit; the tasks carry the dispatch span's context to the workers
 * (their lease transfers join the trace), and every receipt is a `remora.receipt` span linked to its window.
 */

import { createHash } from "node:crypto"
import type { Codec } from "@reef/kernel"
import {
  type CommitEvent,
  EpochControl,
  type EpochReport,
  Fence,
  ObjectTransfer,
  type Receipt,
  type Rejection,
  RejectReason,
  SymmetricBlock,
  type Transaction,
  type WorkerReport,
  WorkerRetired
} from "@reef/proto"
import {
  type AutoscalerParams,
  type AutoscalerState,
  COORDINATOR_SOURCE,
  type CompletionData,
  type CoordinatorInput,
  type CoordinatorOutput,
  type CoordinatorParams,
  type CoordinatorState,
  checkStall,
  createAutoscaler,
  createCoordinator,
  createStallBackstop,
  genesisValue,
  observeLoad,
  ownerOf,
  poolLoads,
  retiringWorkers,
  type StallBackstop,
  stepCoordinator,
  versionOf,
  type WorkerRef
} from "@reef/remora"
import {
  completionFromWire,
  linkTo,
  nowNs,
  type RemoraTx,
  type SpanRecorder,
  statefulTaskCodec,
  statelessTaskCodec,
  statusToWire,
  symmetricToWire,
  traceparentOf
} from "@reef/remora/shell"
import type * as Tracer from "effect/Tracer"
import type { ConsensusSourceShape, Decision } from "./consensus-source.js"
import { CoordinatorTelemetry } from "./coordinator-telemetry.js"
import { type DurableState, memoryDurableState } from "./durable-state.js"
import { defaultMempoolLimits, Mempool, type MempoolLimits } from "./mempool.js"
import { ReceiptBook, type ReceiptWaiter } from "./receipts.js"
import { type PoolMemberView, WorkerPool } from "./worker-pool.js"

export interface CoordinatorOptions {
  readonly id: string
  readonly incarnation: string
  readonly params: CoordinatorParams
  /** A block is formed this often from what the pool holds (sooner when a block is full). */
  readonly blockIntervalMs: number
  readonly maxBlockTxs: number
  /** Proposals in consensus at once; beyond it the pool waits (and fills up: back-pressure on clients). */
  readonly maxPendingProposals: number
  readonly mempool: MempoolLimits
  /** Receipts kept in memory for GetReceipt (all of them are on disk with --data-dir). */
  readonly maxReceipts: number
  /** An epoch ends this often (ms; 0: only every `params.epochBlocks` blocks). */
  readonly epochMs: number
  /**
   * Work in flight and no completion for this long: messages were lost (the bus delivers at most once, e.g.
   * across a NATS server restart), so recover by replay rather than wait forever (0: never).
   */
  readonly stallRecoveryMs: number
  /**
   * Elasticity (§4.7): the pool of active workers follows the load within min..max; workers beyond it are spares.
   * Undefined: every worker present is active and nothing is retired.
   */
  readonly autoscale?: AutoscaleOptions
}

export interface AutoscaleOptions extends AutoscalerParams {
  /** The autoscaler observes the pool's load this often (ms). */
  readonly everyMs: number
}

export const defaultCoordinatorOptions = (
  id: string,
  incarnation: string,
  params: CoordinatorParams
): CoordinatorOptions => ({
  id,
  incarnation,
  params,
  blockIntervalMs: 20,
  maxBlockTxs: 2000,
  maxPendingProposals: 256,
  mempool: defaultMempoolLimits,
  maxReceipts: 200_000,
  epochMs: 1_000,
  stallRecoveryMs: 5_000
})

export interface CoordinatorIo {
  /** A batched tell to a worker; `parent` is the span it is sent in (the kernel's send span becomes its child). */
  readonly tellWorker: <A>(
    worker: string,
    codec: Codec<A>,
    messages: ReadonlyArray<A>,
    parent: Tracer.Span | undefined
  ) => void
  readonly spans: SpanRecorder
  readonly warn: (message: string) => void
  readonly info: (message: string) => void
}

export type SubmitOutcome =
  | { readonly accepted: true; readonly txId: string }
  | { readonly accepted: false; readonly txId: string; readonly rejection: Rejection }

export interface CoordinatorCounters {
  accepted: number
  rejected: number
  committed: number
  completed: number
  blocks: number
  /** Workers seen to restart (a new incarnation of a known id). */
  workerRestarts: number
  recoveries: number
  epochsPersisted: number
  /** Re-executions whose outcome differed from the receipt given before (Lemma 8 says never). */
  reexecutionMismatches: number
  /** Spares activated by the autoscaler, and workers it retired (their retirement done). */
  scaleOuts: number
  scaleIns: number
}

/** A pool member with the load the coordinator placed on it. */
export interface PoolMember extends PoolMemberView {
  readonly loadUs: number
}

/** Batches stay well inside the bus's 1 MiB payload limit. */
const MAX_BATCH_MESSAGES = 1024
const MAX_BATCH_BYTES = 512 * 1024

const taskBytes = (tx: RemoraTx): number => {
  let n = 160 + tx.payload.body.length
  for (const k of tx.keys) n += k.length + 12
  return n
}

/** Splits `items` into batches of at most MAX_BATCH_MESSAGES and about MAX_BATCH_BYTES. */
const chunks = <T>(items: ReadonlyArray<T>, bytes: (item: T) => number): Array<Array<T>> => {
  const out: Array<Array<T>> = []
  let current: Array<T> = []
  let size = 0
  for (const item of items) {
    const b = bytes(item)
    if (current.length > 0 && (current.length >= MAX_BATCH_MESSAGES || size + b > MAX_BATCH_BYTES)) {
      out.push(current)
      current = []
      size = 0
    }
    current.push(item)
    size += b
  }
  if (current.length > 0) out.push(current)
  return out
}

/** Hex SHA-256 over the block's transactions (ids and signatures: a signature covers its body). */
export const blockDigest = (txs: ReadonlyArray<RemoraTx>): string => {
  // The same bytes as an update per id, NUL and signature, in one buffer and one update (a native call each
  // costs more than the copy).
  let size = 0
  for (const tx of txs) size += Buffer.byteLength(tx.id) + 1 + tx.payload.signature.length
  const bytes = Buffer.allocUnsafe(size)
  let at = 0
  for (const tx of txs) {
    at += bytes.write(tx.id, at)
    bytes[at++] = 0
    bytes.set(tx.payload.signature, at)
    at += tx.payload.signature.length
  }
  return createHash("sha256").update(bytes).digest("hex")
}

interface Window {
  readonly span: Tracer.Span | undefined
  readonly digest: string
}

interface Height {
  readonly window: Window
  readonly committedAtMs: number
  remaining: number
}

export class CoordinatorDriver {
  readonly core: CoordinatorState<Transaction>
  readonly mempool: Mempool
  readonly receipts: ReceiptBook
  /** Metrics (coordinator-telemetry.ts): sampled with the role status, plus each block's completion. */
  readonly telemetry: CoordinatorTelemetry
  readonly counters: CoordinatorCounters = {
    accepted: 0,
    rejected: 0,
    committed: 0,
    completed: 0,
    blocks: 0,
    workerRestarts: 0,
    recoveries: 0,
    epochsPersisted: 0,
    reexecutionMismatches: 0,
    scaleOuts: 0,
    scaleIns: 0
  }
  /** Which present workers take work (all of them, or the autoscaled pool and its spares). */
  readonly pool: WorkerPool
  private readonly autoscaler: AutoscalerState | undefined
  private readonly autoscaleTimer: ReturnType<typeof setInterval> | undefined
  /** A restarted coordinator replays its log before it admits anything (UNAVAILABLE until then). */
  private restoring = false
  /** When this incarnation started, and when it served again after a restore (ms since the epoch). */
  readonly startedAtMs = Date.now()
  servingAtMs: number | undefined
  /** Receipts built this turn, given once they are on disk. */
  private unflushed: Array<Receipt> = []
  private flushScheduled = false
  private readonly epochTimer: ReturnType<typeof setInterval> | undefined
  private readonly ticker: ReturnType<typeof setInterval>
  private readonly watchers = new Set<(event: CommitEvent) => void>()
  private readonly windows = new Map<number, Window>()
  private readonly heights = new Map<number, Height>()
  private proposals = 0
  private proposeScheduled = false
  private readonly blockTimer: ReturnType<typeof setInterval>
  private closed = false

  constructor(
    readonly options: CoordinatorOptions,
    private readonly io: CoordinatorIo,
    readonly consensus: ConsensusSourceShape,
    readonly durable: DurableState = memoryDurableState()
  ) {
    this.core = createCoordinator<Transaction>(options.params)
    this.pool = new WorkerPool(options.autoscale?.min)
    this.autoscaler = options.autoscale === undefined ? undefined : createAutoscaler(options.autoscale)
    this.autoscaleTimer =
      options.autoscale === undefined
        ? undefined
        : setInterval(() => this.autoscale(performance.now()), options.autoscale.everyMs)
    this.stall = createStallBackstop(options.stallRecoveryMs)
    this.telemetry = new CoordinatorTelemetry(options.id)
    this.mempool = new Mempool(options.mempool)
    this.receipts = new ReceiptBook(options.maxReceipts, durable.receipt)
    this.restore()
    consensus.listen((d) => this.onDecision(d))
    this.blockTimer = setInterval(() => this.proposeBlocks(), options.blockIntervalMs)
    this.epochTimer =
      options.epochMs > 0 ? setInterval(() => this.feed({ _tag: "EndEpoch" }), options.epochMs) : undefined
    this.ticker = setInterval(() => {
      const now = performance.now()
      this.feed({ _tag: "Tick", nowMs: now })
      this.checkServing()
      this.checkStall(now)
      this.refence(now)
    }, 200)
  }

  close(): void {
    this.closed = true
    clearInterval(this.blockTimer)
    clearInterval(this.ticker)
    if (this.epochTimer !== undefined) clearInterval(this.epochTimer)
    if (this.autoscaleTimer !== undefined) clearInterval(this.autoscaleTimer)
    this.flushReceipts()
  }

  /** A new incarnation on an earlier one's data: its chain, receipts and seen ids, replayed once workers are there. */
  private restore(): void {
    const restored = this.durable.restore()
    if (restored === undefined) return
    this.restoring = true
    const last = restored.log[restored.log.length - 1]
    const committed = last === undefined ? restored.persisted.seq : last.firstSeq + last.txs.length - 1
    this.counters.committed = committed
    this.counters.completed = restored.receipts
    this.counters.blocks = last?.height ?? restored.persisted.height
    for (const b of restored.log) {
      let remaining = 0
      for (const tx of b.txs) {
        if (this.receipts.given(tx.id) !== undefined) continue
        this.receipts.accepted(tx.id, 0)
        remaining++
      }
      const window = { span: undefined, digest: b.digest }
      if (remaining > 0) this.heights.set(b.height, { window, committedAtMs: b.committedAtMs, remaining })
      this.mempool.rememberAll(b.txs.map((tx) => tx.id))
    }
    this.io.warn(
      `coordinator restarted (${this.durable.description}): snapshot of epoch ${restored.persisted.epoch} ` +
        `(seq ${restored.persisted.seq}, height ${restored.persisted.height}), ${restored.log.length} blocks to replay ` +
        `up to seq ${committed}, ${restored.receipts} receipts kept, fence generation ${restored.generation}; ` +
        `UNAVAILABLE until replayed`
    )
    this.feed({
      _tag: "Restore",
      generation: restored.generation,
      persisted: restored.persisted,
      snapshot: restored.snapshot,
      log: restored.log
    })
  }

  /** The liveness backstop (core/stall.ts): work in flight with no completion for its timeout is replayed. */
  private readonly stall: StallBackstop
  private refencedAtMs = 0

  /**
   * The fence again, every second, to every active worker: a Fence is one NATS message, lost when the server
   * restarts or drops a paused worker as a slow consumer, and a worker that missed it would keep objects of a
   * generation that no longer counts (a worker ignores a fence it already took).
   */
  private refence(nowMs: number): void {
    if (nowMs - this.refencedAtMs < 1_000) return
    this.refencedAtMs = nowMs
    const generation = this.core.generation
    if (generation > 0)
      for (const w of this.workers) {
        this.io.tellWorker(w, Fence, [{ generation, coordinatorIncarnation: this.options.incarnation }], undefined)
      }
    // Likewise the retirement of a worker still present (the one message may have been lost).
    for (const w of this.pool.retiredPresent()) this.tellRetired(w.id, w.incarnation, "retired")
  }

  private checkStall(nowMs: number): void {
    const reason = checkStall(this.stall, this.core as CoordinatorState<unknown>, nowMs)
    if (reason !== undefined) this.feed({ _tag: "Recover", reason })
  }

  /** Serving again once the replay of a restore has completed. */
  private checkServing(): void {
    if (!this.restoring) return
    if (this.core.replayPending || this.core.inflight.watermark <= this.core.replayedTo) return
    this.restoring = false
    this.servingAtMs = Date.now()
    this.io.warn(`coordinator recovered: serving again ${this.servingAtMs - this.startedAtMs} ms after start`)
  }

  /** Why a submission cannot be taken now, if it cannot. */
  get unavailable(): string | undefined {
    this.checkServing()
    return this.restoring ? "the coordinator restarted and is replaying its committed blocks; retry" : undefined
  }

  // ---- clients --------------------------------------------------------------------------------------------

  /** Admits a transaction into the pool (or refuses it); `waiter` hears its receipt once it executed. */
  submit(tx: Transaction, waiter?: ReceiptWaiter): SubmitOutcome {
    if (this.closed) return this.refuse("", RejectReason.REJECT_REASON_UNAVAILABLE, "the coordinator is shutting down")
    const unavailable = this.unavailable
    if (unavailable !== undefined) return this.refuse("", RejectReason.REJECT_REASON_UNAVAILABLE, unavailable)
    const admitted = this.mempool.submit(tx, (id) => this.receipts.given(id) !== undefined)
    // Idempotent submit: an id seen before is answered with its one receipt (now, or once it has executed).
    if (!admitted.ok && admitted.duplicate === true && this.receipts.wait(admitted.txId, waiter ?? (() => {}))) {
      return { accepted: true, txId: admitted.txId }
    }
    if (!admitted.ok) {
      this.counters.rejected++
      return { accepted: false, txId: admitted.txId, rejection: admitted.rejection }
    }
    this.counters.accepted++
    this.receipts.accepted(admitted.tx.id, Date.now(), waiter)
    if (this.mempool.size >= this.options.maxBlockTxs && !this.proposeScheduled) {
      this.proposeScheduled = true
      setImmediate(() => this.proposeBlocks())
    }
    return { accepted: true, txId: admitted.tx.id }
  }

  watch(listener: (event: CommitEvent) => void): () => void {
    this.watchers.add(listener)
    return () => this.watchers.delete(listener)
  }

  /** Who holds `key` now and the version its latest committed access will produce. */
  owner(key: string): { readonly owner: string; readonly assignedVersion: number } {
    const id = this.core.keys.find(key)
    const packed = id < 0 ? 0 : this.core.router.get(id)
    const code = ownerOf(packed)
    return {
      owner: code === 0 ? COORDINATOR_SOURCE : this.core.registry.idOf(code),
      assignedVersion: versionOf(packed)
    }
  }

  /**
   * The version of `key` the coordinator itself holds as its current owner: its persisted value (after a
   * recovery reclaimed it), or the initial value of a key never assigned; undefined when a worker owns it.
   */
  held(key: string): { readonly version: number; readonly value: Uint8Array } | undefined {
    const id = this.core.keys.find(key)
    const packed = id < 0 ? 0 : this.core.router.get(id)
    if (ownerOf(packed) !== 0) return undefined
    const version = versionOf(packed)
    if (version === 0) return { version, value: genesisValue(key) }
    const persisted = this.core.snapshot.get(key)
    return persisted?.version === version ? persisted : undefined
  }

  /** Every object the coordinator holds as owner beyond the initial values (for the state digest). */
  *heldObjects(): Iterable<{ readonly key: string; readonly version: number; readonly value: Uint8Array }> {
    for (const o of this.core.snapshot.values()) {
      const id = this.core.keys.find(o.key)
      const packed = id < 0 ? 0 : this.core.router.get(id)
      if (ownerOf(packed) === 0 && versionOf(packed) === o.version) yield o
    }
  }

  /** The workers placements go to. */
  get workers(): ReadonlyArray<string> {
    return this.core.active.map((c) => this.core.registry.idOf(c))
  }

  /** Every present worker, its part in the pool and its load (the operator view). */
  poolView(): ReadonlyArray<PoolMember> {
    const loads = new Map(poolLoads(this.core).map((w) => [w.id, w.load]))
    return this.pool
      .view(new Set(retiringWorkers(this.core)))
      .map((m) => ({ ...m, loadUs: m.state === "spare" ? 0 : Math.round(loads.get(m.worker) ?? 0) }))
  }

  // ---- elasticity -----------------------------------------------------------------------------------------

  /** One observation of the autoscaler (core/autoscaler.ts); a decision is logged and carried out. */
  private autoscale(nowMs: number): void {
    if (this.autoscaler === undefined || this.closed || this.restoring) return
    const decision = observeLoad(this.autoscaler, nowMs, poolLoads(this.core))
    if (decision === undefined) return
    this.telemetry.onDecision(decision._tag, decision.reason)
    const why = `${decision.reason}, mean load ${Math.round(decision.meanLoad)} µs over ${decision.pool} workers`
    if (decision._tag === "Retire") {
      this.io.info(`autoscaler: retire ${decision.worker} (${why})`)
      this.feed({ _tag: "Retire", worker: decision.worker, reason: decision.reason })
      return
    }
    this.scaleOut(decision.reason, why)
  }

  private scaleOut(reason: string, why: string): void {
    const spare = this.pool.activate()
    if (spare === undefined) {
      // Below min: the workers have not all joined yet (at start, or after losses); the pool takes them as they do.
      if (reason === "below-min")
        this.io.info(`autoscaler: fewer active workers than --autoscale's min; waiting for workers to join`)
      else this.io.warn(`autoscaler: scale-out (${why}) but no spare worker is running; start one with reef run worker`)
      return
    }
    this.counters.scaleOuts++
    this.io.info(`autoscaler: scale-out (${why}): ${spare.id} (incarnation ${spare.incarnation}) joins the pool`)
    this.feed({ _tag: "Workers", workers: this.pool.active() })
  }

  /** Nothing accepted is left unexecuted. */
  get idle(): boolean {
    return (
      this.mempool.size === 0 &&
      this.core.pending.length === 0 &&
      this.core.awaiting.length === 0 &&
      this.core.inflight.size === 0
    )
  }

  // ---- inputs from the actor --------------------------------------------------------------------------------

  /** The workers present in the cluster (joined, not left); the pool decides which of them take work. */
  setWorkers(workers: ReadonlyArray<WorkerRef>): void {
    this.pool.setPresent(workers)
    this.feed({ _tag: "Workers", workers: this.pool.active() })
  }

  onEpochReports(reports: ReadonlyArray<EpochReport>): void {
    for (const r of reports) {
      this.feed({
        _tag: "EpochReport",
        worker: r.worker,
        generation: r.generation,
        epoch: r.epoch,
        objects: r.objects.map((o) => ({ key: o.key, version: o.version, value: new Uint8Array(o.value) }))
      })
    }
  }

  onReports(reports: ReadonlyArray<WorkerReport>): void {
    for (const r of reports) {
      const completions: Array<CompletionData> = []
      for (const c of r.completions) {
        const data = completionFromWire(c)
        if (data === undefined) this.io.warn(`report of ${r.worker}: completion ${c.seq} has no status`)
        else completions.push(data)
      }
      this.feed({
        _tag: "Report",
        worker: r.worker,
        incarnation: r.incarnation,
        completions,
        statelessDoneUs: r.statelessDoneUs,
        generation: r.generation
      })
    }
  }

  onObjectRequest(key: string, version: number, requester: string): void {
    this.feed({ _tag: "ObjectRequest", key, version, requester })
  }

  // ---- blocks ---------------------------------------------------------------------------------------------

  /** Forms blocks from the pool while consensus has room: RunStateless, then PlanBlock, then propose. */
  proposeBlocks(): void {
    this.proposeScheduled = false
    while (!this.closed && this.mempool.size > 0 && this.core.pending.length < this.options.maxPendingProposals) {
      const txs = this.mempool.take(this.options.maxBlockTxs)
      const proposal = ++this.proposals
      const digest = blockDigest(txs)
      const spans = this.io.spans
      const span = spans.start("remora.consensus_window", {
        attributes: {
          "remora.proposal": proposal,
          "remora.block.digest": digest,
          "remora.block.txs": txs.length,
          "remora.consensus": this.consensus.name,
          "remora.coordinator": this.options.id
        }
      })
      this.windows.set(proposal, { span, digest })
      const statelessAt = nowNs()
      this.feed({ _tag: "Propose", block: { proposal, digest, txs } })
      spans.record("remora.stateless", statelessAt, {
        parentSpan: span,
        attributes: { "remora.proposal": proposal, "remora.separation": this.options.params.separation }
      })
      const scheduleAt = nowNs()
      this.feed({ _tag: "Plan", proposal })
      spans.record("remora.schedule", scheduleAt, {
        parentSpan: span,
        attributes: { "remora.proposal": proposal, "remora.policy": this.options.params.policy }
      })
      this.consensus.propose({ proposal, digest, txs: txs.length })
    }
  }

  private onDecision(d: Decision): void {
    if (this.closed) return
    if (d._tag === "Reject") this.io.warn(`proposal ${d.proposal} rejected: ${d.reason}`)
    this.feed(d._tag === "Commit" ? { _tag: "Commit", proposal: d.proposal } : { _tag: "Reject", proposal: d.proposal })
    // Room in consensus again: propose what waited.
    if (this.mempool.size > 0) this.proposeBlocks()
  }

  // ---- the core -------------------------------------------------------------------------------------------

  private readonly inputs: Array<CoordinatorInput<Transaction>> = []
  private feeding = false

  /** Steps the core, never re-entrantly: an output that makes an input (Persisted) goes to the back. */
  private feed(input: CoordinatorInput<Transaction>): void {
    this.inputs.push(input)
    if (this.feeding) return
    this.feeding = true
    try {
      for (let next = this.inputs.shift(); next !== undefined; next = this.inputs.shift()) {
        const ended: Array<Window> = []
        for (const o of stepCoordinator(this.core, next)) this.perform(o, ended)
        for (const w of ended) this.io.spans.end(w.span)
      }
    } finally {
      this.feeding = false
    }
  }

  private perform(o: CoordinatorOutput<Transaction>, ended: Array<Window>): void {
    switch (o._tag) {
      case "SendStateless":
        for (const batch of chunks(o.tasks, (t) => taskBytes(t.tx))) {
          this.io.tellWorker(o.worker, statelessTaskCodec, batch, undefined)
        }
        break
      case "SendStateful": {
        const window = this.heights.get(o.height)?.window
        const spans = this.io.spans
        for (const batch of chunks(o.tasks, (t) => taskBytes(t.tx))) {
          const span = spans.start("remora.dispatch", {
            parentSpan: window?.span,
            kind: "producer",
            attributes: { "remora.worker": o.worker, "remora.height": o.height, "remora.dispatch.tasks": batch.length }
          })
          const trace = traceparentOf(span)
          this.io.tellWorker(o.worker, statefulTaskCodec(trace, o.incarnation), batch, span)
          spans.end(span)
        }
        break
      }
      case "SendSymmetric":
        for (const w of o.workers) {
          this.io.tellWorker(
            w,
            SymmetricBlock,
            [symmetricToWire(o.firstSeq, o.height, o.txs, o.workers, o.watermark, o.schedulingCostUs)],
            this.heights.get(o.height)?.window.span
          )
        }
        break
      case "Planned":
        break
      case "WorkerRestarted":
        this.counters.workerRestarts++
        this.io.warn(
          `worker ${o.worker} restarted (incarnation ${o.previous} -> ${o.incarnation}): ${o.lostSeqs.length} ` +
            `transactions in flight and ${o.leases} leases of the old process are recovered`
        )
        break
      case "Fence":
        // On disk before any worker hears of it: a restarted coordinator must fence above it.
        this.durable.setGeneration(o.generation)
        for (const w of o.workers)
          this.io.tellWorker(
            w,
            Fence,
            [{ generation: o.generation, coordinatorIncarnation: this.options.incarnation }],
            undefined
          )
        break
      case "Recovered": {
        this.counters.recoveries++
        const p = this.core.persisted
        this.io.warn(
          `recovery after ${o.reason}: fence generation ${o.generation}; ${o.reclaimed} objects reclaimed; state ` +
            `rolled back to the snapshot of epoch ${p.epoch} (persist_index ${p.seq}); replay set seqs ` +
            `${o.fromSeq}..${o.toSeq} (${o.blocks} blocks) dispatched over ${o.workers.join(", ")}; new ` +
            `transactions are accepted meanwhile`
        )
        break
      }
      case "RequestEpochReports":
        for (const w of o.workers) {
          this.io.tellWorker(
            w,
            EpochControl,
            [{ generation: this.core.generation, reportEpoch: o.epoch, persistedEpoch: 0 }],
            undefined
          )
        }
        break
      case "Persist":
        this.io.spans.record("remora.snapshot", nowNs(), {
          attributes: {
            "remora.epoch": o.epoch,
            "remora.persist_index": o.persisted.seq,
            "remora.objects": o.objects.length
          }
        })
        this.durable.persistEpoch(o.persisted, o.objects)
        this.inputs.push({ _tag: "Persisted", epoch: o.epoch })
        break
      case "EpochPersisted":
        this.counters.epochsPersisted++
        for (const w of o.workers) {
          this.io.tellWorker(
            w,
            EpochControl,
            [{ generation: this.core.generation, reportEpoch: 0, persistedEpoch: o.epoch }],
            undefined
          )
        }
        break
      case "Committed": {
        if (this.heights.has(o.height)) break // a replayed block: committed (and on disk) before
        this.durable.appendBlock({
          height: o.height,
          firstSeq: o.firstSeq,
          txs: o.txs,
          digest: this.windows.get(o.proposal)?.digest ?? "",
          committedAtMs: Date.now()
        })
        const window = this.windows.get(o.proposal) ?? { span: undefined, digest: "" }
        this.windows.delete(o.proposal)
        const now = Date.now()
        this.heights.set(o.height, { window, committedAtMs: now, remaining: o.txs.length })
        this.counters.committed += o.txs.length
        this.counters.blocks++
        window.span?.attribute("remora.height", o.height)
        window.span?.attribute("remora.plan_adopted", o.adopted)
        ended.push(window)
        if (this.watchers.size > 0) {
          const event: CommitEvent = {
            height: o.height,
            digest: window.digest,
            firstSeq: o.firstSeq,
            txIds: o.txs.map((t) => t.id),
            committedAtMs: now,
            planAdopted: o.adopted
          }
          for (const w of this.watchers) w(event)
        }
        break
      }
      case "Rejected": {
        const window = this.windows.get(o.proposal)
        this.windows.delete(o.proposal)
        if (window !== undefined) {
          window.span?.attribute("remora.rejected", true)
          ended.push(window)
        }
        this.mempool.requeue(o.txs)
        break
      }
      case "Completed":
        this.complete(o)
        break
      case "Retiring":
        this.io.info(`autoscaler: ${o.worker} retiring (${o.reason}): no new work; it drains, then an epoch ends`)
        break
      case "RetireRefused":
        this.io.warn(`autoscaler: cannot retire ${o.worker}: ${o.reason}`)
        break
      case "RetireCancelled":
        this.io.warn(`autoscaler: retirement of ${o.worker} cancelled: ${o.reason}`)
        break
      case "Reclaimed":
        this.io.info(`autoscaler: ${o.objects} objects of ${o.worker} reclaimed at epoch ${o.epoch}`)
        break
      case "Retired":
        this.retired(o)
        break
      case "SendObject":
        this.io.tellWorker(
          o.to,
          ObjectTransfer,
          [
            {
              key: o.key,
              version: o.version,
              value:
                o.value === "genesis"
                  ? Buffer.from(genesisValue(o.key))
                  : o.value === "missing"
                    ? Buffer.alloc(0)
                    : Buffer.from(o.value),
              from: COORDINATOR_SOURCE,
              missing: o.value === "missing",
              traceparent: "",
              // Not read: the coordinator's versions hold in every generation.
              generation: 0
            }
          ],
          undefined
        )
        break
    }
  }

  /** Out of the pool for good: the process is told to stop (Shutdown of Alg. 5); its id may return as a spare. */
  private retired(o: Extract<CoordinatorOutput<Transaction>, { _tag: "Retired" }>): void {
    this.pool.retire({ id: o.worker, incarnation: o.incarnation })
    this.counters.scaleIns++
    this.io.info(
      `autoscaler: ${o.worker} (incarnation ${o.incarnation}) retired (${o.reason}; ${o.reclaimed} objects ` +
        `reclaimed${o.left ? "; it had left" : ""})`
    )
    if (!o.left) this.tellRetired(o.worker, o.incarnation, o.reason)
    this.inputs.push({ _tag: "Workers", workers: this.pool.active() })
  }

  private tellRetired(worker: string, incarnation: string, reason: string): void {
    const retired = { incarnation, reason, coordinatorIncarnation: this.options.incarnation }
    this.io.tellWorker(worker, WorkerRetired, [retired], undefined)
  }

  private complete(o: Extract<CoordinatorOutput<Transaction>, { _tag: "Completed" }>): void {
    const height = this.heights.get(o.height)
    const given = this.receipts.given(o.txId)
    if (given !== undefined) {
      // Re-executed in a recovery: its receipt stands, and its outcome must be the same (Lemma 8).
      if (given.status !== statusToWire(o.status) || given.detail !== o.detail || given.seq !== o.seq) {
        this.counters.reexecutionMismatches++
        this.io.warn(`re-execution of ${o.txId} (seq ${o.seq}) differs from its receipt: ${o.status} ${o.detail}`)
      }
      return
    }
    this.counters.completed++
    const receipt: Receipt = this.receipts.build({
      txId: o.txId,
      status: statusToWire(o.status),
      seq: o.seq,
      height: o.height,
      blockDigest: height?.window.digest ?? "",
      committedAtMs: height?.committedAtMs ?? 0,
      worker: o.worker,
      leaseTransfers: o.leaseTransfers,
      detail: o.detail,
      completedAtMs: Date.now()
    })
    this.unflushed.push(receipt)
    if (!this.flushScheduled) {
      this.flushScheduled = true
      setImmediate(() => this.flushReceipts())
    }
    if (height === undefined) return
    const window = height.window.span
    if (window !== undefined) {
      this.io.spans.record("remora.receipt", nowNs(), {
        links: [linkTo(window)],
        attributes: {
          "remora.tx.id": receipt.txId,
          "remora.tx.seq": receipt.seq,
          "remora.tx.status": o.status,
          "remora.worker": o.worker,
          "remora.height": o.height,
          "remora.lease_transfers": o.leaseTransfers
        }
      })
    }
    if (--height.remaining <= 0) {
      this.heights.delete(o.height)
      this.telemetry.onBlockCompleted(Date.now() - height.committedAtMs)
    }
  }

  /** Receipts of the turn go to disk in one transaction, then to their waiters: a given receipt is never lost. */
  private flushReceipts(): void {
    this.flushScheduled = false
    const batch = this.unflushed
    if (batch.length === 0) return
    this.unflushed = []
    this.durable.putReceipts(batch)
    for (const r of batch) this.receipts.deliver(r)
  }

  private refuse(txId: string, reason: RejectReason, message: string): SubmitOutcome {
    this.counters.rejected++
    return { accepted: false, txId, rejection: { reason, message } }
  }
}
