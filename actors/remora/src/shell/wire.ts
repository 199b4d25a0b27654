/**
 * Between the cores' plain data and the protobuf messages the coordinator and workers exchange over NATS.
 * A task carries its keys, write bits and costs, so a worker never re-admits a transaction: it only decodes
 * the body when it runs the contract.
 */

import { type BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire"
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
  StatefulTask as StatefulTaskMessage,
  StatelessTask as StatelessTaskMessage,
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

/** A message codec as ts-proto generates them (the kernel's Codec): type name, encode into a writer, decode. */
export interface MessageCodec<A> {
  readonly $type: string
  encode(message: A, writer?: BinaryWriter): BinaryWriter
  decode(input: BinaryReader | Uint8Array, length?: number): A
}

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

/** A uint64 field's varint for a value below 2^53: a uint32 varint below 2^32 (the same bytes, no BigInt). */
const writeUint = (w: BinaryWriter, value: number): BinaryWriter =>
  value <= 0xffffffff ? w.uint32(value) : w.uint64(value)

/**
 * The sending side of StatelessTask straight from the core's task: the same bytes as
 * `StatelessTask.encode(statelessToWire(t))`, without the wire object in between (the dispatch hot path).
 */
export const statelessTaskCodec: MessageCodec<StatelessTaskData<Transaction>> = {
  $type: StatelessTaskMessage.$type,
  encode(t, w = new BinaryWriter()) {
    w.uint32(10).bytes(encodedTransaction(t.tx.payload))
    if (t.proposal !== 0) writeUint(w.uint32(32), t.proposal)
    if (t.pushTo !== "") w.uint32(42).string(t.pushTo)
    return w
  },
  decode(input, length) {
    const t = statelessFromWire(StatelessTaskMessage.decode(input, length))
    if (typeof t === "string") throw new Error(t)
    return t
  }
}

/**
 * The sending side of StatefulTask straight from the core's task, for one batch (its trace context and the
 * incarnation it is for): the same bytes as `StatefulTask.encode(statefulToWire(t, traceparent, incarnation))`.
 */
export const statefulTaskCodec = (
  traceparent: string,
  incarnation: string
): MessageCodec<StatefulTaskData<Transaction>> => ({
  $type: StatefulTaskMessage.$type,
  encode(t, w = new BinaryWriter()) {
    if (t.seq !== 0) writeUint(w.uint32(8), t.seq)
    w.uint32(18).bytes(encodedTransaction(t.tx.payload))
    for (const v of t.versions) writeUint(w.uint32(40), v)
    for (const source of t.sources) w.uint32(50).string(source)
    if (t.tokenSource !== "") w.uint32(58).string(t.tokenSource)
    if (t.tokenPushed) w.uint32(128).bool(true)
    if (t.watermark !== 0) writeUint(w.uint32(64), t.watermark)
    if (t.combined) w.uint32(96).bool(true)
    if (traceparent !== "") w.uint32(106).string(traceparent)
    if (t.height !== 0) writeUint(w.uint32(112), t.height)
    if (incarnation !== "") w.uint32(122).string(incarnation)
    if (t.epoch !== 0) writeUint(w.uint32(136), t.epoch)
    if (t.generation !== 0) writeUint(w.uint32(144), t.generation)
    return w
  },
  decode(input, length) {
    const t = statefulFromWire(StatefulTaskMessage.decode(input, length))
    if (typeof t === "string") throw new Error(t)
    return t
  }
})

export const statelessToWire = (t: StatelessTaskData<Transaction>): StatelessTask => ({
  transaction: asBuffer(encodedTransaction(t.tx.payload)),
  proposal: t.proposal,
  pushTo: t.pushTo
})

export const statelessFromWire = (m: StatelessTask): StatelessTaskData<Transaction> | string => {
  const tx = workerTx(m.transaction)
  return typeof tx === "string" ? tx : { proposal: m.proposal, tx, pushTo: m.pushTo }
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
  tokenPushed: t.tokenPushed,
  watermark: t.watermark,
  combined: t.combined,
  traceparent,
  height: t.height,
  epoch: t.epoch,
  generation: t.generation
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
    tokenPushed: m.tokenPushed,
    combined: m.combined,
    watermark: m.watermark,
    height: m.height,
    epoch: m.epoch,
    generation: m.generation,
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
