/**
 * Receipts: the outcome of every executed transaction, kept for `GetReceipt` (the newest `capacity` ones), and
 * the callers waiting for one (a Submit stream, a SubmitTransaction with wait_for_receipt).
 */
import type { Receipt } from "@reef/proto"

export type ReceiptWaiter = (receipt: Receipt) => void

interface Pending {
  readonly acceptedAtMs: number
  waiters: Array<ReceiptWaiter> | undefined
}

export class ReceiptBook {
  private readonly pending = new Map<string, Pending>()
  private readonly done = new Map<string, Receipt>()

  /** `durable`: receipts of earlier incarnations (or beyond `capacity`), from the coordinator's disk. */
  constructor(
    private readonly capacity = 200_000,
    private readonly durable: (txId: string) => Receipt | undefined = () => undefined
  ) {}

  accepted(txId: string, acceptedAtMs: number, waiter?: ReceiptWaiter): void {
    this.pending.set(txId, { acceptedAtMs, waiters: waiter === undefined ? undefined : [waiter] })
  }

  /** Another caller waits for `txId`'s receipt; false when the id is unknown. */
  wait(txId: string, waiter: ReceiptWaiter): boolean {
    const receipt = this.done.get(txId) ?? this.durable(txId)
    if (receipt !== undefined) {
      waiter(receipt)
      return true
    }
    const p = this.pending.get(txId)
    if (p === undefined) return false
    p.waiters = [...(p.waiters ?? []), waiter]
    return true
  }

  /**
   * Builds the receipt (its block's digest and commit time come from the caller, which keeps them once per block
   * rather than once per transaction), stores it and answers its waiters.
   */
  complete(receipt: Omit<Receipt, "acceptedAtMs">): Receipt {
    return this.deliver(this.build(receipt))
  }

  /** The full receipt (its accept time from the pending entry), not given yet. */
  build(receipt: Omit<Receipt, "acceptedAtMs">): Receipt {
    const p = this.pending.get(receipt.txId)
    // Field by field: a spread copy costs several times more on this path (one per transaction).
    const full: Receipt = {
      txId: receipt.txId,
      status: receipt.status,
      seq: receipt.seq,
      height: receipt.height,
      blockDigest: receipt.blockDigest,
      worker: receipt.worker,
      leaseTransfers: receipt.leaseTransfers,
      detail: receipt.detail,
      acceptedAtMs: p?.acceptedAtMs ?? 0,
      committedAtMs: receipt.committedAtMs,
      completedAtMs: receipt.completedAtMs
    }
    return full
  }

  /** Gives a built receipt (once it is durable): kept for GetReceipt, and its waiters answered. */
  deliver(full: Receipt): Receipt {
    const p = this.pending.get(full.txId)
    this.pending.delete(full.txId)
    this.done.set(full.txId, full)
    if (this.done.size > this.capacity) this.done.delete(this.done.keys().next().value!)
    for (const w of p?.waiters ?? []) w(full)
    return full
  }

  lookup(txId: string): Receipt | "pending" | undefined {
    return this.done.get(txId) ?? (this.pending.has(txId) ? "pending" : this.durable(txId))
  }

  /** The receipt given for `txId` (this incarnation or an earlier one), if any. */
  given(txId: string): Receipt | undefined {
    return this.done.get(txId) ?? this.durable(txId)
  }

  get pendingCount(): number {
    return this.pending.size
  }
}
