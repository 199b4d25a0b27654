/** The contracts a Remora deployment runs, by `ContractCall.contract` name. */
import type { AnyContract } from "./contract.js"
import { tokenTransfer } from "./token.js"
import { tpccNewOrder, tpccPayment } from "./tpcc.js"
import { ycsbRmw } from "./ycsb.js"

export const CONTRACTS: ReadonlyMap<string, AnyContract> = new Map<string, AnyContract>(
  [ycsbRmw, tokenTransfer, tpccNewOrder, tpccPayment].map((c) => [c.name, c])
)

export const contractNamed = (name: string): AnyContract | undefined => CONTRACTS.get(name)
