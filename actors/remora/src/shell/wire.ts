/**
 * Between the cores' plain data and the protobuf messages the coordinator and workers exchange over NATS.
 * A task carries its keys, write bits and costs, so a worker never re-admits a transaction: it only decodes
 * the body when it runs the contract.
 */
import type {
  Completion,
  StatefulTask,
  StatelessTask,
  SymmetricBlock,
  Transaction,
  TxStatus as TxStatusEnum
} from "@reef/proto"
import {
  PeekObjectReply,
  PeekObjectRequest,
  StateDigest,
  StateDigestRequest,
  TransactionBody,
  Transaction as TransactionMessage,
  TxStatus
} from "@reef/proto"
import type { CompletionData, StatefulTaskData, StatelessTaskData } from "../core/coordinator.js"
import type { TxMeta, TxOutcome } from "../core/types.js"
import type { StatefulIn, SymmetricIn } from "../core/worker.js"
import { admit, keyLayout } from "../tx/transaction.js"
import { asBuffer } from "../workload/generators.js"

export type RemoraTx = TxMeta<Transaction>

/**
 * The encoding of a transaction, made once and kept (a transaction goes out in its stateless task and in its
 * stateful task, each a copy of these bytes instead of a fresh encoding of its fields).
 */
const encodings = new WeakMap<Transaction, Uint8Array>()
export const encodedTransaction = (tx: Transaction): Uint8Array => {
  let bytes = encodings.get(tx)
  if (bytes === undefined) {
    bytes = TransactionMessage.encode(tx).finish()
    encodings.set(tx, bytes)
  }
  return bytes
}

/**
 * A transaction as a worker needs it: decoded, with its keys, write bits and costs read from its body (a light
 * admission: the coordinator checked the rest). Undefined when it does not decode.
 */
export const workerTx = (bytes: Uint8Array): RemoraTx | string => {
  let tx: Transaction
  let body: TransactionBody
  try {
    tx = TransactionMessage.decode(bytes)
    body = TransactionBody.decode(tx.body)
  } catch (e) {
    return `transaction does not decode: ${(e as Error).message}`
  }
  if (body.readSet.length + body.writeSet.length === 0) return `transaction ${body.id} has no keys`
  const { keys, writes } = keyLayout(body.readSet, body.writeSet)
  return {
    id: body.id,
    keys,
    writes,
    statelessCostUs: body.statelessCostUs,
    statefulCostUs: body.statefulCostUs,
    payload: tx
  }
}

export const statelessToWire = (t: StatelessTaskData<Transaction>): StatelessTask => ({
  transaction: asBuffer(encodedTransaction(t.tx.payload)),
  proposal: t.proposal
})

export const statelessFromWire = (m: StatelessTask): StatelessTaskData<Transaction> | string => {
  const tx = workerTx(m.transaction)
  return typeof tx === "string" ? tx : { proposal: m.proposal, tx }
}

export const statefulToWire = (
  t: StatefulTaskData<Transaction>,
  traceparent: string,
  incarnation: string
): StatefulTask => ({
  seq: t.seq,
  incarnation,
  transaction: asBuffer(encodedTransaction(t.tx.payload)),
  versions: t.versions as Array<number>,
  sources: t.sources as Array<string>,
  tokenSource: t.tokenSource,
  watermark: t.watermark,
  combined: t.combined,
  traceparent,
  height: t.height
})

/** A task that does not hold together (lengths differ, no transaction) is refused, never half-run. */
export const statefulFromWire = (m: StatefulTask): StatefulIn<Transaction> | string => {
  const tx = workerTx(m.transaction)
  if (typeof tx === "string") return `task ${m.seq}: ${tx}`
  if (m.versions.length !== tx.keys.length || m.sources.length !== tx.keys.length) {
    return `task ${m.seq}: ${tx.keys.length} keys, ${m.versions.length} versions, ${m.sources.length} sources`
  }
  return {
    seq: m.seq,
    tx,
    versions: m.versions,
    sources: m.sources,
    tokenSource: m.tokenSource,
    combined: m.combined,
    watermark: m.watermark,
    height: m.height,
    trace: m.traceparent,
    incarnation: m.incarnation
  }
}

export const symmetricToWire = (
  firstSeq: number,
  height: number,
  txs: ReadonlyArray<RemoraTx>,
  workers: ReadonlyArray<string>,
  watermark: number,
  schedulingCostUs: number
): SymmetricBlock => ({
  firstSeq,
  height,
  transactions: txs.map((t) => t.payload),
  workers: [...workers],
  watermark,
  schedulingCostUs
})

/** Every worker admits the block's transactions itself (SymArch: each node does the whole control stack). */
export const symmetricFromWire = (m: SymmetricBlock): SymmetricIn<Transaction> | string => {
  const txs: Array<RemoraTx> = []
  for (const tx of m.transactions) {
    const a = admit(tx)
    if (!a.ok) return `block at seq ${m.firstSeq}: ${a.rejection.message}`
    txs.push(a.meta as RemoraTx)
  }
  return {
    firstSeq: m.firstSeq,
    height: m.height,
    txs,
    workers: m.workers,
    watermark: m.watermark,
    schedulingCostUs: m.schedulingCostUs
  }
}

const STATUS_TO_WIRE: Record<TxOutcome, TxStatusEnum> = {
  executed: TxStatus.TX_STATUS_EXECUTED,
  "invalid-signature": TxStatus.TX_STATUS_INVALID_SIGNATURE,
  aborted: TxStatus.TX_STATUS_ABORTED
}

export const statusToWire = (s: TxOutcome): TxStatusEnum => STATUS_TO_WIRE[s]

export const statusFromWire = (s: TxStatusEnum): TxOutcome | undefined =>
  s === TxStatus.TX_STATUS_EXECUTED
    ? "executed"
    : s === TxStatus.TX_STATUS_INVALID_SIGNATURE
      ? "invalid-signature"
      : s === TxStatus.TX_STATUS_ABORTED
        ? "aborted"
        : undefined

export const completionToWire = (c: CompletionData): Completion => ({
  seq: c.seq,
  status: statusToWire(c.status),
  leaseTransfers: c.leaseTransfers,
  detail: c.detail
})

export const completionFromWire = (c: Completion): CompletionData | undefined => {
  const status = statusFromWire(c.status)
  return status === undefined ? undefined : { seq: c.seq, status, leaseTransfers: c.leaseTransfers, detail: c.detail }
}

/** Asks a worker for the digest of the objects it holds (the coordinator adds them up). */
export const StateDigestRpc: { readonly request: typeof StateDigestRequest; readonly reply: typeof StateDigest } = {
  request: StateDigestRequest,
  reply: StateDigest
}
/** Asks a worker (or the coordinator) what it holds of one object. */
export const PeekObjectRpc: { readonly request: typeof PeekObjectRequest; readonly reply: typeof PeekObjectReply } = {
  request: PeekObjectRequest,
  reply: PeekObjectReply
}

/** Roles of the two actors, as in subjects (`reef.<cluster>.coordinator.<id>`, `reef.<cluster>.worker.<id>`). */
export const COORDINATOR_ROLE = "coordinator"
export const WORKER_ROLE = "worker"
