/**
 * Transactions and blocks: what the primary orders and a backup replays. A transaction names an entry
 * point and its arguments only; which storage it touches follows from executing it against state.
 *
 * Wire form of a block's transactions: fixed-width big-endian records (kind u8, sender u32, target u32,
 * a u32, b u32, amount u64), preceded by a count; decoding checks every length and kind.
 */
import * as Data from "effect/Data"
import { type Tx, TxKind } from "../core/tx.js"
import { readU64, type StorageKey, writeU64 } from "../state/keys.js"
import type { StorageChange } from "../state/store.js"
import { swapExact } from "./contracts/amm.js"
import { borrow, repay, supply, updatePrice } from "./contracts/lending.js"
import { mint } from "./contracts/mint-list.js"
import { approve, transfer } from "./contracts/tokens.js"
import {
  type AccessObserver,
  type AccessRecorder,
  BlockExecution,
  type ChainContext,
  type ExecutionCounters,
  type PreState,
  stateChangeHash
} from "./execution.js"

export { type Tx, TxKind } from "../core/tx.js"

const MAX_KIND = 8

const TX_BYTES = 1 + 4 + 4 + 4 + 4 + 8
/** A block of more transactions is refused (bounds a decoder's allocation). */
export const MAX_BLOCK_TXS = 100_000

export class TxDecodeError extends Data.TaggedError("TxDecodeError")<{ readonly reason: string }> {
  override get message() {
    return `malformed block transactions: ${this.reason}`
  }
}

export const encodeTxs = (txs: ReadonlyArray<Tx>): Buffer => {
  const bytes = Buffer.alloc(4 + txs.length * TX_BYTES)
  bytes.writeUInt32BE(txs.length, 0)
  let offset = 4
  for (const tx of txs) {
    bytes[offset] = tx.kind
    bytes.writeUInt32BE(tx.sender, offset + 1)
    bytes.writeUInt32BE(tx.target, offset + 5)
    bytes.writeUInt32BE(tx.a, offset + 9)
    bytes.writeUInt32BE(tx.b, offset + 13)
    writeU64(bytes, offset + 17, tx.amount)
    offset += TX_BYTES
  }
  return bytes
}

export const decodeTxs = (bytes: Uint8Array): Array<Tx> => {
  if (bytes.length < 4) throw new TxDecodeError({ reason: `${bytes.length} bytes, no count` })
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  const count = view.readUInt32BE(0)
  if (count > MAX_BLOCK_TXS) throw new TxDecodeError({ reason: `${count} transactions (at most ${MAX_BLOCK_TXS})` })
  if (bytes.length !== 4 + count * TX_BYTES) {
    throw new TxDecodeError({ reason: `${bytes.length} bytes for ${count} transactions` })
  }
  const txs: Array<Tx> = []
  for (let i = 0, offset = 4; i < count; i++, offset += TX_BYTES) {
    const kind = view[offset]!
    if (kind < 1 || kind > MAX_KIND) throw new TxDecodeError({ reason: `transaction ${i} has kind ${kind}` })
    let amount: number
    try {
      amount = readU64(view, offset + 17)
    } catch {
      throw new TxDecodeError({ reason: `transaction ${i} amount above 2^53` })
    }
    txs.push({
      kind: kind as TxKind,
      sender: view.readUInt32BE(offset + 1),
      target: view.readUInt32BE(offset + 5),
      a: view.readUInt32BE(offset + 9),
      b: view.readUInt32BE(offset + 13),
      amount
    })
  }
  return txs
}

const run = (x: BlockExecution, tx: Tx): void => {
  switch (tx.kind) {
    case TxKind.Transfer:
      transfer(x, tx.target, tx.sender, tx.a, tx.amount)
      break
    case TxKind.Approve:
      approve(x, tx.target, tx.sender, tx.a, tx.amount)
      break
    case TxKind.Swap:
      swapExact(x, tx.target, tx.sender, tx.a, tx.b, tx.amount)
      break
    case TxKind.Mint:
      mint(x, tx.target, tx.sender, tx.a, tx.amount)
      break
    case TxKind.Borrow:
      borrow(x, tx.target, tx.sender, tx.amount)
      break
    case TxKind.Repay:
      repay(x, tx.target, tx.sender, tx.amount)
      break
    case TxKind.Supply:
      supply(x, tx.target, tx.sender, tx.amount)
      break
    case TxKind.PriceUpdate:
      updatePrice(x, tx.target, tx.a, tx.amount)
      break
  }
}

/** What executing a block produced. */
export interface BlockOutcome {
  readonly number: number
  /** Changed keys in key order, with values before and after. */
  readonly changes: ReadonlyArray<StorageChange>
  /** 1 per transaction that succeeded, 0 per reverted one. */
  readonly statuses: Uint8Array
  readonly stateHash: Buffer
  readonly counters: Readonly<ExecutionCounters>
  readonly uniqueKeys: number
  /** Every key the block touched, with its value at the end of the block (for cross-block caches). */
  readonly finalValues: ReadonlyMap<StorageKey, number>
}

export interface ExecuteOptions {
  readonly recorder?: AccessRecorder
  readonly observer?: AccessObserver
}

/** Executes a block's transactions in order on its parent's state. */
export const executeBlock = (
  number: number,
  txs: ReadonlyArray<Tx>,
  chain: ChainContext,
  pre: PreState,
  options: ExecuteOptions = {}
): BlockOutcome => {
  const x = new BlockExecution(number, chain, pre, options.recorder, options.observer)
  const statuses = new Uint8Array(txs.length)
  for (let i = 0; i < txs.length; i++) statuses[i] = x.transaction(() => run(x, txs[i]!)) ? 1 : 0
  const changes = x.changes()
  return {
    number,
    changes,
    statuses,
    stateHash: stateChangeHash(number, changes, statuses),
    counters: x.counters,
    uniqueKeys: x.uniqueKeys,
    finalValues: x.finalValues
  }
}
