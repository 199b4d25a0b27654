/**
 * Transactions accepted and not yet proposed, in arrival order, and the ids the coordinator has seen (a
 * duplicate id is refused). Admission's structural checks (`admit` in @reef/remora) run here, synchronously;
 * signatures are checked later, by the stateless part on a worker.
 */
import { type Rejection, RejectReason, type Transaction } from "@reef/proto"
import { type AdmissionLimits, admit, DEFAULT_ADMISSION_LIMITS, Deque } from "@reef/remora"
import { encodedTransaction, type RemoraTx } from "@reef/remora/shell"

export interface MempoolLimits {
  /** Transactions waiting to be proposed; beyond it a submission is refused OVERLOADED. */
  readonly maxPending: number
  /** Ids remembered for the duplicate check (oldest forgotten first). */
  readonly maxRememberedIds: number
  readonly admission: AdmissionLimits
}

export const defaultMempoolLimits: MempoolLimits = {
  maxPending: 200_000,
  maxRememberedIds: 4_000_000,
  admission: DEFAULT_ADMISSION_LIMITS
}

export type Admitted =
  | { readonly ok: true; readonly tx: RemoraTx }
  | { readonly ok: false; readonly txId: string; readonly rejection: Rejection; readonly duplicate?: true }

export class Mempool {
  private queue = new Deque<RemoraTx>()
  private readonly front: Array<RemoraTx> = []
  private readonly seen = new Set<string>()

  constructor(private readonly limits: MempoolLimits = defaultMempoolLimits) {}

  get size(): number {
    return this.queue.length + this.front.length
  }

  /**
   * Admits `tx` at the back of the queue, or says why not. `known`: ids an earlier incarnation committed (a
   * duplicate of one, like a duplicate seen here, is marked `duplicate`: the caller answers with its receipt).
   */
  submit(tx: Transaction, known: (id: string) => boolean = () => false): Admitted {
    const a = admit(tx, this.limits.admission)
    if (!a.ok) return { ok: false, txId: a.txId, rejection: a.rejection }
    const id = a.meta.id
    if (this.seen.has(id) || known(id)) {
      return {
        ok: false,
        duplicate: true,
        txId: id,
        rejection: {
          reason: RejectReason.REJECT_REASON_DUPLICATE_ID,
          message: `transaction id "${id}" was already submitted`
        }
      }
    }
    if (this.size >= this.limits.maxPending) {
      return {
        ok: false,
        txId: id,
        rejection: {
          reason: RejectReason.REJECT_REASON_OVERLOADED,
          message: `${this.size} transactions are waiting; retry later`
        }
      }
    }
    this.remember(id)
    const meta = a.meta as RemoraTx
    // The bytes every task carries, encoded once (a real client's bytes would be kept as received; grpc-js
    // hands over decoded messages).
    encodedTransaction(meta.payload)
    this.queue.push(meta)
    return { ok: true, tx: meta }
  }

  /** The next block's transactions: those of a rejected block first, then in arrival order. */
  take(max: number): Array<RemoraTx> {
    const out = this.front.splice(0, max)
    while (out.length < max) {
      const tx = this.queue.shift()
      if (tx === undefined) break
      out.push(tx)
    }
    return out
  }

  /** A rejected block's transactions go first into the next block. */
  requeue(txs: ReadonlyArray<RemoraTx>): void {
    this.front.unshift(...txs)
  }

  /** Ids a restored coordinator committed already (its log): a resubmission is a duplicate. */
  rememberAll(ids: Iterable<string>): void {
    for (const id of ids) this.remember(id)
  }

  private remember(id: string): void {
    this.seen.add(id)
    if (this.seen.size > this.limits.maxRememberedIds) this.seen.delete(this.seen.values().next().value!)
  }
}
