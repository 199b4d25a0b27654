/**
 * What a client of Remora needs to check a run end to end: a deterministic signed workload (some signatures
 * deliberately bad), and the sequential reference executor's state hash over the order consensus chose. A run
 * is right when the hash of the executed state (GetExecutionState) equals `referenceHash` of its committed
 * order (the receipts' seqs, or the commit events).
 */
import type { CommitEvent, Receipt, Transaction } from "@reef/proto"
import {
  admit,
  bodySource,
  ed25519Signer,
  Prng,
  ReferenceExecutor,
  type ReferenceStep,
  SignatureVerifier,
  signingKeyFromSeed,
  type TxMeta,
  transactionStream,
  type WorkloadSpec
} from "@reef/remora"

export interface SignedWorkload {
  readonly txs: ReadonlyArray<Transaction>
  /** Every transaction by its id. */
  readonly byId: ReadonlyMap<string, Transaction>
  /** How many carry a bad signature. */
  readonly invalid: number
}

/** `n` signed transactions of `spec`, a share `invalidShare` with bad signatures, deterministic from `seed`. */
export const signedWorkload = (
  spec: WorkloadSpec,
  n: number,
  seed: number,
  invalidShare: number,
  prefix = "t"
): SignedWorkload => {
  const prng = new Prng(seed)
  const key = signingKeyFromSeed(new Uint8Array(32).fill(seed & 0xff))
  const next = transactionStream(bodySource(spec, prng.fork()), ed25519Signer(key), prng.fork(), invalidShare, prefix)
  const txs: Array<Transaction> = []
  const byId = new Map<string, Transaction>()
  let invalid = 0
  for (let i = 0; i < n; i++) {
    const { tx, valid } = next()
    if (!valid) invalid++
    txs.push(tx)
    byId.set((admit(tx) as { meta: TxMeta }).meta.id, tx)
  }
  return { txs, byId, invalid }
}

/** The reference executor's state hash over `order` (transaction ids in consensus order). */
export const referenceHash = (order: ReadonlyArray<string>, byId: ReadonlyMap<string, Transaction>): string =>
  referenceState(order, byId).digest().hex()

/** The reference executor after running `order`: its objects say where a diverged run first differs. */
export const referenceState = (
  order: ReadonlyArray<string>,
  byId: ReadonlyMap<string, Transaction>,
  options: { readonly recordHistory?: boolean } = {},
  onStep?: (id: string, step: ReferenceStep) => void
): ReferenceExecutor => {
  const reference = new ReferenceExecutor(options)
  const verifier = new SignatureVerifier()
  for (const id of order) {
    const tx = byId.get(id)
    if (tx === undefined) throw new Error(`committed transaction ${id} was never submitted`)
    const a = admit(tx)
    if (!a.ok) throw new Error(`committed transaction ${id} is not admissible: ${a.rejection.message}`)
    const step = reference.apply(a.meta as TxMeta<Transaction>, verifier.verify(tx.publicKey, tx.body, tx.signature))
    onStep?.(id, step)
  }
  return reference
}

/** Transaction ids in consensus order, from the commit events. */
export const committedOrder = (commits: ReadonlyArray<CommitEvent>): Array<string> =>
  [...commits].sort((a, b) => a.height - b.height).flatMap((c) => c.txIds)

/** Transaction ids in consensus order, from their receipts (a receipt's seq is its position). */
export const receiptOrder = (receipts: Iterable<Receipt>): Array<string> =>
  [...receipts].sort((a, b) => a.seq - b.seq).map((r) => r.txId)
