/**
 * The stateful part of a transaction: decode its body and run its contract on the values `read` gives. Pure:
 * the same transaction and the same inputs always give the same outcome (assumption A2), which is what lets
 * the reference executor, the simulator and the workers agree. Inputs are never changed.
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
  // Each read is the contract's own copy: a contract that edits a value in place must never change the input
  // version it was given, which the worker still holds for its epoch report and lease transfers. (A Buffer's
  // slice() is a view, not a copy: values from the wire are Buffers.)
  const own: ObjectReader = (key) => new Uint8Array(read(key))
  try {
    return contract.execute(args, { readSet: body.readSet, writeSet: body.writeSet }, own)
  } catch (e) {
    // Deterministic too: the same inputs throw the same way everywhere (an undeclared key, a contract bug).
    return aborted(`contract failed: ${(e as Error).message}`)
  }
}
