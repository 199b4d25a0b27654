/** Plain transactions for the core tests: keys and costs only (the cores never look inside the payload). */

import type { TxMeta } from "../core/types.js"
import { keyLayout } from "../tx/transaction.js"

export const tx = (
  id: string,
  reads: ReadonlyArray<string>,
  writes: ReadonlyArray<string> = reads,
  costs: { statelessCostUs?: number; statefulCostUs?: number } = {}
): TxMeta<string> => {
  const layout = keyLayout(reads, writes)
  return {
    id,
    keys: layout.keys,
    writes: layout.writes,
    statelessCostUs: costs.statelessCostUs ?? 0,
    statefulCostUs: costs.statefulCostUs ?? 0,
    payload: id
  }
}
