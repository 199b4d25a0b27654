/**
 * One incarnation of the simulated coordinator process: the real coordinator core inside a model of its shell
 * (`actors/coordinator/src/coordinator-driver.ts`, `mempool.ts`, `receipts.ts`), with its disk (`durable.ts`).
 * The shell package cannot be imported here (it sits above this one), so its recovery-relevant behaviour is
 * modelled step by step:
 *
 * - the pool and its seen ids (memory), plus the ids a restored log committed and the receipts on disk: a
 *   resubmitted id is a duplicate, answered with its one receipt;
 * - `Committed` appends the block to disk before its tasks go out; a `Fence` is on disk before any worker hears
 *   of it; `Persist` is one disk write, then `Persisted` is fed;
 * - receipts built in a turn go to disk at its end, then to their waiters (a receipt given is never lost), and a
 *   re-executed transaction whose receipt was given keeps it (a differing outcome is reported);
 * - restore: a new incarnation reads the disk, fences above the stored generation, answers UNAVAILABLE until the
 *   replay of its log has completed;
 * - timers: Tick (epoch report retries), the fence sent again every second, a replay when work in flight makes
 *   no progress (no completion) for the stall timeout, doubled after a fruitless one, and EndEpoch every
 *   `epochMs`.
 *
 * A kill can land between two outputs of a step (`killAfter`): what was performed before it happened (sends
 * may still arrive, disk writes are durable), the rest never did.
 */
import {
  type CoordinatorInput,
  type CoordinatorOutput,
  type CoordinatorParams,
  type CoordinatorState,
  createCoordinator,
  type stepCoordinator
} from "../core/coordinator.js"
import { checkStall, createStallBackstop, type StallBackstop } from "../core/stall.js"
import type { TxMeta, WorkerId, WorkerRef } from "../core/types.js"
import type { WorkerInput } from "../core/worker.js"
import type { SimDisk, SimReceipt } from "./durable.js"

export interface CoordinatorProcessOptions {
  readonly stallRecoveryMs: number
  /** Mutant: the seen-id check consults only this incarnation's memory (neither its log nor its receipts). */
  readonly volatileSeenIds: boolean
  /** Mutant: the backstop's progress is the watermark only, with a fixed timeout (finding S2). */
  readonly stallWatermarkOnly: boolean
}

export interface CoordinatorIo<P> {
  readonly toWorker: (worker: WorkerId, input: WorkerInput<P>) => void
  /** A receipt is on disk and given: to the client if one waits on this incarnation. */
  readonly gave: (receipt: SimReceipt, waited: boolean) => void
  /** A block was appended to the chain on disk. */
  readonly appended: (height: number, firstSeq: number, txs: ReadonlyArray<TxMeta<P>>) => void
  /** A transaction whose receipt was given completed again with another outcome (the shell logs it). */
  readonly mismatch: (given: SimReceipt, again: Extract<CoordinatorOutput<P>, { _tag: "Completed" }>) => void
  readonly output: (o: CoordinatorOutput<P>) => void
}

export type SubmitResult<P> =
  | { readonly kind: "accepted"; readonly tx: TxMeta<P> }
  | { readonly kind: "unavailable" }
  /** A duplicate whose receipt was given: answered at once. */
  | { readonly kind: "receipt"; readonly receipt: SimReceipt }
  /** A duplicate still executing: the caller waits for its receipt. */
  | { readonly kind: "waiting" }

export type StepStepper = typeof stepCoordinator

export class CoordinatorProcess<P> {
  readonly core: CoordinatorState<P>
  /** Alive until killed; a kill inside a step stops the step's outputs where it lands. */
  alive = true
  /** Outputs left to perform before the kill lands (undefined: no kill pending). */
  killAfter: number | undefined
  private readonly queue: Array<TxMeta<P>> = []
  private readonly front: Array<TxMeta<P>> = []
  private readonly seen = new Set<string>()
  /** ReceiptBook: given this incarnation, accepted and not given yet, and who waits. */
  private readonly done = new Map<string, SimReceipt>()
  private readonly pendingIds = new Set<string>()
  private readonly waiters = new Set<string>()
  private unflushed: Array<SimReceipt> = []
  private readonly heights = new Map<number, { remaining: number }>()
  private restoring = false
  private proposals = 0
  private readonly stall: StallBackstop
  private refencedAtMs = 0
  private readonly inputs: Array<CoordinatorInput<P>> = []

  constructor(
    readonly incarnation: number,
    params: CoordinatorParams,
    private readonly disk: SimDisk<P>,
    private readonly options: CoordinatorProcessOptions,
    private readonly io: CoordinatorIo<P>,
    private readonly step: StepStepper,
    nowMs: number
  ) {
    this.core = createCoordinator<P>(params)
    this.stall = createStallBackstop(options.stallRecoveryMs, nowMs, options.stallWatermarkOnly)
    this.restore()
  }

  private restore(): void {
    const restored = this.disk.restore()
    if (restored === undefined) return
    this.restoring = true
    for (const b of restored.log) {
      let remaining = 0
      for (const tx of b.txs) {
        if (!this.options.volatileSeenIds) this.seen.add(tx.id)
        if (this.given(tx.id) !== undefined) continue
        this.pendingIds.add(tx.id)
        remaining++
      }
      if (remaining > 0) this.heights.set(b.height, { remaining })
    }
    this.feed({
      _tag: "Restore",
      generation: restored.generation,
      persisted: restored.persisted,
      snapshot: restored.snapshot,
      log: restored.log
    })
  }

  private given(txId: string): SimReceipt | undefined {
    return this.done.get(txId) ?? this.disk.receipt(txId)
  }

  /** UNAVAILABLE until a restore's replay has completed. */
  get unavailable(): boolean {
    if (this.restoring && !this.core.replayPending && this.core.inflight.watermark > this.core.replayedTo) {
      this.restoring = false
    }
    return this.restoring
  }

  get mempoolSize(): number {
    return this.queue.length + this.front.length
  }

  get idle(): boolean {
    return (
      this.mempoolSize === 0 &&
      this.core.pending.length === 0 &&
      this.core.awaiting.length === 0 &&
      this.core.inflight.size === 0
    )
  }

  submit(tx: TxMeta<P>, waits: boolean): SubmitResult<P> {
    if (this.unavailable) return { kind: "unavailable" }
    const id = tx.id
    const durable = this.options.volatileSeenIds ? this.done.get(id) : this.given(id)
    if (this.seen.has(id) || durable !== undefined) {
      const receipt = this.done.get(id) ?? durable
      if (receipt !== undefined) return { kind: "receipt", receipt }
      if (this.pendingIds.has(id)) {
        if (waits) this.waiters.add(id)
        return { kind: "waiting" }
      }
      // Seen, no receipt and not pending: refused as a duplicate (the client asks again later).
      return { kind: "waiting" }
    }
    this.seen.add(id)
    this.pendingIds.add(id)
    if (waits) this.waiters.add(id)
    this.queue.push(tx)
    return { kind: "accepted", tx }
  }

  /** The next block's transactions (a rejected block's first), or undefined when the pool is empty. */
  propose(maxTxs: number): { readonly proposal: number; readonly txs: ReadonlyArray<TxMeta<P>> } | undefined {
    if (this.mempoolSize === 0) return undefined
    const txs = this.front.splice(0, maxTxs)
    while (txs.length < maxTxs && this.queue.length > 0) txs.push(this.queue.shift()!)
    const proposal = ++this.proposals
    this.feed({ _tag: "Propose", block: { proposal, digest: `p${proposal}`, txs } })
    this.feed({ _tag: "Plan", proposal })
    return { proposal, txs }
  }

  /** The 200 ms shell timer: Tick, the fence again every second, the stall backstop. */
  timer(nowMs: number): void {
    this.feed({ _tag: "Tick", nowMs })
    if (!this.alive) return
    const generation = this.core.generation
    if (generation > 0 && nowMs - this.refencedAtMs >= 1_000) {
      this.refencedAtMs = nowMs
      for (const c of this.core.active) this.io.toWorker(this.core.registry.idOf(c), { _tag: "Fence", generation })
    }
    // The shell's backstop (coordinator-driver.ts runs the same core/stall.ts).
    const reason = checkStall(this.stall, this.core as CoordinatorState<unknown>, nowMs)
    if (reason !== undefined) this.feed({ _tag: "Recover", reason })
  }

  setWorkers(workers: ReadonlyArray<WorkerRef>): void {
    this.feed({ _tag: "Workers", workers })
  }

  /** Steps the core, never re-entrantly; the turn's receipts go to disk, then out. */
  feed(input: CoordinatorInput<P>): void {
    if (!this.alive) return
    this.inputs.push(input)
    for (let next = this.inputs.shift(); next !== undefined && this.alive; next = this.inputs.shift()) {
      for (const o of this.step(this.core, next)) {
        if (this.killAfter !== undefined && this.killAfter-- <= 0) {
          this.alive = false
          return
        }
        this.perform(o)
      }
    }
    this.flushReceipts()
  }

  private perform(o: CoordinatorOutput<P>): void {
    switch (o._tag) {
      case "Committed":
        if (!this.heights.has(o.height)) {
          this.disk.appendBlock({ height: o.height, firstSeq: o.firstSeq, txs: o.txs })
          this.io.appended(o.height, o.firstSeq, o.txs)
          this.heights.set(o.height, { remaining: o.txs.length })
        }
        break
      case "Fence":
        this.disk.setGeneration(o.generation)
        for (const w of o.workers) this.io.toWorker(w, { _tag: "Fence", generation: o.generation })
        break
      case "Persist":
        this.disk.persistEpoch(o.persisted, o.objects)
        this.inputs.push({ _tag: "Persisted", epoch: o.epoch })
        break
      case "RequestEpochReports":
        for (const w of o.workers) {
          this.io.toWorker(w, { _tag: "ReportEpoch", generation: this.core.generation, epoch: o.epoch })
        }
        break
      case "EpochPersisted":
        for (const w of o.workers) {
          this.io.toWorker(w, { _tag: "EpochPersisted", generation: this.core.generation, epoch: o.epoch })
        }
        break
      case "Rejected":
        this.front.unshift(...o.txs)
        break
      case "Completed":
        this.complete(o)
        break
      default:
        break
    }
    this.io.output(o)
  }

  private complete(o: Extract<CoordinatorOutput<P>, { _tag: "Completed" }>): void {
    const given = this.given(o.txId)
    if (given !== undefined) {
      if (given.status !== o.status || given.detail !== o.detail || given.seq !== o.seq) this.io.mismatch(given, o)
      return
    }
    this.unflushed.push({
      txId: o.txId,
      seq: o.seq,
      height: o.height,
      status: o.status,
      detail: o.detail,
      worker: o.worker,
      leaseTransfers: o.leaseTransfers
    })
    const height = this.heights.get(o.height)
    if (height !== undefined && --height.remaining <= 0) this.heights.delete(o.height)
  }

  private flushReceipts(): void {
    if (this.unflushed.length === 0 || !this.alive) return
    const batch = this.unflushed
    this.unflushed = []
    this.disk.putReceipts(batch)
    for (const r of batch) {
      this.done.set(r.txId, r)
      this.pendingIds.delete(r.txId)
      const waited = this.waiters.delete(r.txId)
      this.io.gave(r, waited)
    }
  }
}
