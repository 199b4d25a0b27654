/**
 * Where the coordinator's blocks get their total order: the `ConsensusSource` service. The coordinator proposes
 * each block it forms (App. A.4: "The Coordinator can also observe blocks proposed to consensus before their
 * commitment") and hears back, in commit order, which proposal commits next or which one was dropped.
 *
 * Two layers: `window` (window-consensus.ts: the paper's mock consensus, a fixed window, optionally rejecting or
 * reordering blocks) and `popuc` (popuc-consensus.ts: a running POPUC replica group decides each block).
 */
import * as Context from "effect/Context"

export type Decision =
  /** The proposal is the next block of the total order. */
  | { readonly _tag: "Commit"; readonly proposal: number }
  /** Consensus dropped the proposal (its transactions must be proposed again). */
  | { readonly _tag: "Reject"; readonly proposal: number; readonly reason: string }

/** What consensus needs of a block: its number among this coordinator's proposals, and its digest. */
export interface BlockRef {
  readonly proposal: number
  /** Hex SHA-256 over the block's transactions. */
  readonly digest: string
  readonly txs: number
}

export interface ConsensusSourceShape {
  /** "window" or "popuc". */
  readonly name: string
  /** Hands a block to consensus; its decision comes to the listener. Never blocks. */
  readonly propose: (block: BlockRef) => void
  /** The one listener of decisions, called in commit order (from timers or I/O callbacks). */
  readonly listen: (onDecision: (decision: Decision) => void) => void
  /** One line for logs: the source and its settings. */
  readonly description: string
}

export class ConsensusSource extends Context.Tag("@reef/coordinator/ConsensusSource")<
  ConsensusSource,
  ConsensusSourceShape
>() {}
