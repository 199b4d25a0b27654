/**
 * The stateful part of a transaction: decode its body and run its contract on the values `read` gives. Pure:
 * the same transaction and the same inputs always give the same outcome (assumption A2), which is what lets
 * the reference executor, the simulator and the workers agree.
 */
import { type Transaction, TransactionBody } from "@reef/proto"
import { aborted, type ContractOutcome, type ObjectReader } from "./contract.js"
import { contractNamed } from "./registry.js"

/** Runs `tx`'s contract. An admitted transaction always decodes; anything else aborts with the reason. */
export const executeContract = (tx: Transaction, read: ObjectReader): ContractOutcome => {
  let body: TransactionBody
  try {
    body = TransactionBody.decode(tx.body)
  } catch (e) {
    return aborted(`body does not decode: ${(e as Error).message}`)
  }
  const contract = body.call === undefined ? undefined : contractNamed(body.call.contract)
  if (contract === undefined) return aborted(`unknown contract "${body.call?.contract ?? ""}"`)
  let args: unknown
  try {
    args = contract.decodeArgs(body.call!.args)
  } catch (e) {
    return aborted(`arguments do not decode: ${(e as Error).message}`)
  }
  try {
    return contract.execute(args, { readSet: body.readSet, writeSet: body.writeSet }, read)
  } catch (e) {
    // Deterministic too: the same inputs throw the same way everywhere (an undeclared key, a contract bug).
    return aborted(`contract failed: ${(e as Error).message}`)
  }
}
