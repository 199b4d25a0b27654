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
  ObjectTransfer,
  type Receipt,
  type Rejection,
  RejectReason,
  SymmetricBlock,
  type Transaction,
  type WorkerReport
} from "@reef/proto"
import {
  COORDINATOR_SOURCE,
  type CompletionData,
  type CoordinatorInput,
  type CoordinatorOutput,
  type CoordinatorParams,
  type CoordinatorState,
  createCoordinator,
  genesisValue,
  ownerOf,
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
import { defaultMempoolLimits, Mempool, type MempoolLimits } from "./mempool.js"
import { ReceiptBook, type ReceiptWaiter } from "./receipts.js"

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
  /** Receipts kept for GetReceipt. */
  readonly maxReceipts: number
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
  maxReceipts: 200_000
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
  readonly counters: CoordinatorCounters = {
    accepted: 0,
    rejected: 0,
    committed: 0,
    completed: 0,
    blocks: 0,
    workerRestarts: 0
  }
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
    readonly consensus: ConsensusSourceShape
  ) {
    this.core = createCoordinator<Transaction>(options.params)
    this.mempool = new Mempool(options.mempool)
    this.receipts = new ReceiptBook(options.maxReceipts)
    consensus.listen((d) => this.onDecision(d))
    this.blockTimer = setInterval(() => this.proposeBlocks(), options.blockIntervalMs)
  }

  close(): void {
    this.closed = true
    clearInterval(this.blockTimer)
  }

  // ---- clients --------------------------------------------------------------------------------------------

  /** Admits a transaction into the pool (or refuses it); `waiter` hears its receipt once it executed. */
  submit(tx: Transaction, waiter?: ReceiptWaiter): SubmitOutcome {
    if (this.closed) return this.refuse("", RejectReason.REJECT_REASON_UNAVAILABLE, "the coordinator is shutting down")
    const admitted = this.mempool.submit(tx)
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

  /** The workers placements go to. */
  get workers(): ReadonlyArray<string> {
    return this.core.active.map((c) => this.core.registry.idOf(c))
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

  setWorkers(workers: ReadonlyArray<WorkerRef>): void {
    this.feed({ _tag: "Workers", workers })
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
        statelessDoneUs: r.statelessDoneUs
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

  private feed(input: CoordinatorInput<Transaction>): void {
    const ended: Array<Window> = []
    for (const o of stepCoordinator(this.core, input)) this.perform(o, ended)
    for (const w of ended) this.io.spans.end(w.span)
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
            `transactions in flight and ${o.leases} leases of the old process wait for recovery`
        )
        break
      case "Committed": {
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
      case "SendObject":
        this.io.tellWorker(
          o.to,
          ObjectTransfer,
          [
            {
              key: o.key,
              version: o.version,
              value: o.value === "genesis" ? Buffer.from(genesisValue(o.key)) : Buffer.alloc(0),
              from: COORDINATOR_SOURCE,
              missing: o.value === "missing",
              traceparent: ""
            }
          ],
          undefined
        )
        break
    }
  }

  private complete(o: Extract<CoordinatorOutput<Transaction>, { _tag: "Completed" }>): void {
    this.counters.completed++
    const height = this.heights.get(o.height)
    const receipt: Receipt = this.receipts.complete({
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
    if (--height.remaining <= 0) this.heights.delete(o.height)
  }

  private refuse(txId: string, reason: RejectReason, message: string): SubmitOutcome {
    this.counters.rejected++
    return { accepted: false, txId, rejection: { reason, message } }
  }
}
