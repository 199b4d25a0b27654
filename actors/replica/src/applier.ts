/**
 * Applying decided batches, in the merged order, to the replica's state: the KV commands of every client
 * value, membership changes, the decision log and delivered index peers catch up from. A decided command is
 * this replica's own only when its value carries this process's id *and* incarnation: a restarted replica
 * re-applies what its previous life proposed (a state transfer replays it) and must never answer its new
 * callers with those results (issue 11).
 */
import { type AppliedBatch, isOwnValue, markDelivered, type ProposalRef } from "@reef/nic"
import { KvBatch, type KvCommand } from "@reef/proto"
import { applyCommand, chainValue, type HashChain, type KvResult } from "./kv-state.js"
import type { ReplicaState } from "./replica-state.js"

/** Where the results of this replica's own values go (the proposer's waiting callers). */
export interface OwnResults<Span> {
  readonly command: (command: KvCommand, result: KvResult, instance: number, span: Span) => void
  readonly membership: (ref: ProposalRef, instance: number) => void
}

export interface AppliedSummary {
  /** A membership value was applied: `state.members` changed. */
  readonly membersChanged: boolean
  /** Decided values that were not a KvBatch, skipped identically by every replica. */
  readonly skipped: ReadonlyArray<string>
}

/** Applies one decided batch to `state`, handing this incarnation's own results to `own`. */
export const applyBatch = <Span>(
  state: ReplicaState,
  batch: AppliedBatch,
  hash: HashChain,
  own: OwnResults<Span>,
  span: Span
): AppliedSummary => {
  state.appliedInstance = batch.instance
  if (state.singleEngine) state.decisions.append(batch.instance, batch.values)
  let membersChanged = false
  let skipped: Array<string> | undefined
  for (const value of batch.values) {
    if (state.singleEngine) state.delivered = markDelivered(state.delivered, value)
    const mine = isOwnValue(value, state.id, state.incarnation)
    if (value.kind === "membership") {
      state.members = [...value.members]
      membersChanged = true
      if (mine) own.membership({ engine: batch.engine, seq: value.seq }, batch.instance)
      continue
    }
    if (value.kind !== "client") continue
    let commands: ReadonlyArray<KvCommand>
    try {
      commands = KvBatch.decode(value.payload).commands
    } catch {
      // Every replica sees the same bytes and skips them the same way; the log stays identical.
      skipped ??= []
      skipped.push(`a decided value from ${value.proposer} that is not a KvBatch`)
      continue
    }
    chainValue(state.kv, value.payload, hash)
    for (const command of commands) {
      const result = applyCommand(state.kv, command, state.app)
      if (mine) own.command(command, result, batch.instance, span)
    }
  }
  return { membersChanged, skipped: skipped ?? [] }
}
