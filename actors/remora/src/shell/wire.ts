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
import { PeekObjectReply, PeekObjectRequest, StateDigest, StateDigestRequest, TxStatus } from "@reef/proto"
import type { CompletionData, StatefulTaskData, StatelessTaskData } from "../core/coordinator.js"
import type { TxMeta, TxOutcome } from "../core/types.js"
import type { StatefulIn, SymmetricIn } from "../core/worker.js"
import { admit } from "../tx/transaction.js"
import { asBuffer } from "../workload/generators.js"

export type RemoraTx = TxMeta<Transaction>

export const statelessToWire = (t: StatelessTaskData<Transaction>): StatelessTask => ({
  transaction: t.tx.payload,
  txId: t.tx.id,
  costUs: t.tx.statelessCostUs,
  proposal: t.proposal
})

export const statelessFromWire = (m: StatelessTask): StatelessTaskData<Transaction> | undefined =>
  m.transaction === undefined
    ? undefined
    : {
        proposal: m.proposal,
        tx: {
          id: m.txId,
          keys: [],
          writes: new Uint8Array(0),
          statelessCostUs: m.costUs,
          statefulCostUs: 0,
          payload: m.transaction
        }
      }

export const statefulToWire = (t: StatefulTaskData<Transaction>, traceparent: string): StatefulTask => ({
  seq: t.seq,
  transaction: t.tx.payload,
  keys: t.tx.keys as Array<string>,
  writes: asBuffer(t.tx.writes),
  versions: t.versions as Array<number>,
  sources: t.sources as Array<string>,
  tokenSource: t.tokenSource,
  watermark: t.watermark,
  statelessCostUs: t.tx.statelessCostUs,
  statefulCostUs: t.tx.statefulCostUs,
  txId: t.tx.id,
  combined: t.combined,
  traceparent,
  height: t.height
})

/** A task that does not hold together (lengths differ, no transaction) is refused, never half-run. */
export const statefulFromWire = (m: StatefulTask): StatefulIn<Transaction> | string => {
  if (m.transaction === undefined) return "task without a transaction"
  if (m.keys.length === 0 || m.versions.length !== m.keys.length || m.sources.length !== m.keys.length) {
    return `task ${m.seq}: ${m.keys.length} keys, ${m.versions.length} versions, ${m.sources.length} sources`
  }
  return {
    seq: m.seq,
    tx: {
      id: m.txId,
      keys: m.keys,
      writes: m.writes,
      statelessCostUs: m.statelessCostUs,
      statefulCostUs: m.statefulCostUs,
      payload: m.transaction
    },
    versions: m.versions,
    sources: m.sources,
    tokenSource: m.tokenSource,
    combined: m.combined,
    watermark: m.watermark,
    height: m.height,
    trace: m.traceparent
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
