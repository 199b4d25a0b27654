/**
 * What the primary does per block (Algorithm 1): execute with the hint recorder attached, build the hint
 * from what it saw, serialize it. The three are timed apart: the paper's hint overhead is construction plus
 * serialization as a share of execution (§5.2).
 */
import { compressHint } from "../hint/compression.js"
import { encodeHint, type Hint } from "../hint/format.js"
import { HintRecorder } from "../hint/recorder.js"
import type { ChainContext, PreState } from "../runtime/execution.js"
import { type BlockOutcome, executeBlock, type Tx } from "../runtime/transactions.js"

export interface PrimaryBlock {
  readonly number: number
  readonly txs: ReadonlyArray<Tx>
  readonly outcome: BlockOutcome
  readonly hint: Hint
  /** The hint as sent: raw format in a zstd frame. */
  readonly hintFrame: Buffer
  readonly rawHintBytes: number
  readonly execMs: number
  /** Building the hint from the recorded accesses and encoding it. */
  readonly constructMs: number
  /** Compressing it. */
  readonly serializeMs: number
}

export const executeAsPrimary = (
  number: number,
  txs: ReadonlyArray<Tx>,
  chain: ChainContext,
  pre: PreState,
  recorder: HintRecorder = new HintRecorder()
): PrimaryBlock => {
  const started = performance.now()
  const outcome = executeBlock(number, txs, chain, pre, { recorder })
  const executed = performance.now()
  const hint = recorder.take(number)
  const raw = encodeHint(hint)
  const constructed = performance.now()
  const hintFrame = compressHint(raw)
  const serialized = performance.now()
  return {
    number,
    txs,
    outcome,
    hint,
    hintFrame,
    rawHintBytes: raw.length,
    execMs: executed - started,
    constructMs: constructed - executed,
    serializeMs: serialized - constructed
  }
}
