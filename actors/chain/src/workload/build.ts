/**
 * Runs the chain from its genesis as the primary does (each block executed on its parent's state, read as
 * of the head) and commits the blocks in bulk transactions: how test and benchmark stores get a history.
 */
import { ChainContext } from "../runtime/execution.js"
import { type BlockOutcome, type ExecuteOptions, executeBlock } from "../runtime/transactions.js"
import { commitBlockInTransaction, readHead, StateReader, type StoreTables } from "../state/store.js"
import { StoreState } from "../state/store-state.js"
import { type ChainContracts, type ChainSpec, contractsOf } from "./chain-spec.js"
import { generateBlock, type WorkloadSpec } from "./generator.js"

export interface BuildOptions {
  /** Blocks committed per LMDB transaction. */
  readonly blocksPerTransaction?: number
  readonly optionsFor?: (block: number) => ExecuteOptions
  readonly onBlock?: (outcome: BlockOutcome) => void
}

/** Executes and commits blocks head+1 .. `toBlock` of the workload on `tables`; returns the new head. */
export const extendChain = (
  tables: StoreTables,
  spec: ChainSpec,
  workload: WorkloadSpec,
  toBlock: number,
  options: BuildOptions = {},
  chain: ChainContracts = contractsOf(spec)
): number => {
  const context = new ChainContext(spec.seed, spec.users)
  const perTransaction = options.blocksPerTransaction ?? 32
  let head = readHead(tables)
  while (head < toBlock) {
    const last = Math.min(toBlock, head + perTransaction)
    tables.env.transactionSync(() => {
      // Reads inside the write transaction see the blocks committed earlier in it.
      const reader = new StateReader(tables)
      for (let block = head + 1; block <= last; block++) {
        const pre = new StoreState(reader, block - 1, block - 1)
        const outcome = executeBlock(
          block,
          generateBlock(chain, workload, block),
          context,
          pre,
          options.optionsFor?.(block)
        )
        commitBlockInTransaction(tables, block, outcome.changes)
        options.onBlock?.(outcome)
      }
    })
    head = last
  }
  return head
}
