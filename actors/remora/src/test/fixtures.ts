/** Helpers the unit tests share: signed bodies and admitted transactions. */
import { TransactionBody as BodyMessage, type Transaction, type TransactionBody } from "@reef/proto"
import type { TxMeta } from "../core/types.js"
import { signingKeyFromSeed } from "../tx/signing.js"
import { admit } from "../tx/transaction.js"
import { asBuffer } from "../workload/generators.js"
import { ed25519Signer } from "../workload/signed.js"

export const testKey = signingKeyFromSeed(new Uint8Array(32).fill(7))
export const sign = ed25519Signer(testKey)

export const signed = (body: TransactionBody, valid = true): Transaction =>
  sign(BodyMessage.encode(body).finish(), valid)

export const admitted = (tx: Transaction): TxMeta<Transaction> => {
  const a = admit(tx)
  if (!a.ok) throw new Error(`not admitted: ${a.rejection.message}`)
  return a.meta as TxMeta<Transaction>
}

export const bodyOf = (
  id: string,
  readSet: ReadonlyArray<string>,
  writeSet: ReadonlyArray<string>,
  contract: string,
  args: Uint8Array
): TransactionBody => ({
  id,
  readSet: [...readSet],
  writeSet: [...writeSet],
  call: { contract, args: asBuffer(args) },
  statelessCostUs: 0,
  statefulCostUs: 0
})
