/**
 * Admission: the structural checks the coordinator makes on a submitted transaction before it may enter a
 * block (no cryptography: the signature is checked by the stateless part, on a worker). A transaction that
 * passes becomes a `TxMeta`: its keys sorted, which of them it writes, and its costs.
 */
import { type Rejection, RejectReason, type Transaction, TransactionBody } from "@reef/proto"
import type { DeclaredSets } from "../contracts/contract.js"
import { contractNamed } from "../contracts/registry.js"
import type { TxMeta } from "../core/types.js"
import { PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from "./signing.js"

export interface AdmissionLimits {
  /** Largest encoded body (bytes). */
  readonly maxBodyBytes: number
  /** Most keys in read_set ∪ write_set. */
  readonly maxKeys: number
  readonly maxKeyBytes: number
  readonly maxIdBytes: number
  /** Largest synthetic cost (µs) of either part. */
  readonly maxCostUs: number
}

export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = {
  maxBodyBytes: 16 * 1024,
  maxKeys: 64,
  maxKeyBytes: 128,
  maxIdBytes: 128,
  maxCostUs: 1_000_000
}

export type Admission =
  | { readonly ok: true; readonly meta: TxMeta }
  | { readonly ok: false; readonly rejection: Rejection; readonly txId: string }

const reject = (reason: RejectReason, message: string, txId = ""): Admission => ({
  ok: false,
  rejection: { reason, message },
  txId
})

/** Printable ASCII without spaces: ids and keys are logged, hashed and used in subjects' payloads. */
const isPrintable = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c <= 0x20 || c >= 0x7f) return false
  }
  return true
}

const checkName = (what: string, s: string, maxBytes: number): string | undefined =>
  s.length === 0
    ? `${what} is empty`
    : s.length > maxBytes
      ? `${what} is longer than ${maxBytes} bytes`
      : isPrintable(s)
        ? undefined
        : `${what} must be printable ASCII without spaces`

/** Keys sorted by code units, duplicates removed, and a write bit per key. */
export const keyLayout = (
  readSet: ReadonlyArray<string>,
  writeSet: ReadonlyArray<string>
): { readonly keys: ReadonlyArray<string>; readonly writes: Uint8Array } => {
  // Sets are small (a few keys): sort and drop neighbours instead of building Sets (admission's hot path).
  const all = readSet.concat(writeSet).sort()
  let n = 0
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[n - 1]) all[n++] = all[i]!
  all.length = n
  const writes = new Uint8Array((n + 7) >> 3)
  for (const w of writeSet) {
    const i = sortedIndexOf(all, w)
    writes[i >> 3]! |= 1 << (i & 7)
  }
  return { keys: all, writes }
}

const sortedIndexOf = (sorted: ReadonlyArray<string>, key: string): number => {
  let lo = 0
  let hi = sorted.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (sorted[mid]! < key) lo = mid + 1
    else hi = mid
  }
  return lo
}

export const isWrite = (writes: Uint8Array, index: number): boolean =>
  ((writes[index >> 3] ?? 0) & (1 << (index & 7))) !== 0

/** Admits `tx` or says why not. Pure: the same transaction always gets the same answer. */
export const admit = (tx: Transaction, limits: AdmissionLimits = DEFAULT_ADMISSION_LIMITS): Admission => {
  if (tx.body.length > limits.maxBodyBytes) {
    return reject(
      RejectReason.REJECT_REASON_OVERSIZED,
      `body of ${tx.body.length} bytes exceeds ${limits.maxBodyBytes}`
    )
  }
  let body: TransactionBody
  try {
    body = TransactionBody.decode(tx.body)
  } catch (e) {
    return reject(RejectReason.REJECT_REASON_MALFORMED, `body does not decode: ${(e as Error).message}`)
  }
  const id = body.id
  const idProblem = checkName("id", id, limits.maxIdBytes)
  if (idProblem !== undefined) return reject(RejectReason.REJECT_REASON_MALFORMED, idProblem)
  const malformed = (message: string) => reject(RejectReason.REJECT_REASON_MALFORMED, message, id)
  if (tx.publicKey.length !== PUBLIC_KEY_BYTES) return malformed(`public key must have ${PUBLIC_KEY_BYTES} bytes`)
  if (tx.signature.length !== SIGNATURE_BYTES) return malformed(`signature must have ${SIGNATURE_BYTES} bytes`)
  if (body.readSet.length === 0 && body.writeSet.length === 0) {
    return reject(RejectReason.REJECT_REASON_EMPTY_SETS, "read set and write set are both empty", id)
  }
  for (const set of [body.readSet, body.writeSet]) {
    for (const key of set) {
      const problem = checkName("key", key, limits.maxKeyBytes)
      if (problem !== undefined) return malformed(`${problem}: "${key.slice(0, 64)}"`)
    }
  }
  const { keys, writes } = keyLayout(body.readSet, body.writeSet)
  if (keys.length > limits.maxKeys) {
    return reject(RejectReason.REJECT_REASON_OVERSIZED, `${keys.length} keys exceed ${limits.maxKeys}`, id)
  }
  if (body.statelessCostUs > limits.maxCostUs || body.statefulCostUs > limits.maxCostUs) {
    return reject(
      RejectReason.REJECT_REASON_INVALID_ARGUMENTS,
      `synthetic costs are at most ${limits.maxCostUs} µs`,
      id
    )
  }
  const name = body.call?.contract ?? ""
  const contract = contractNamed(name)
  if (contract === undefined)
    return reject(RejectReason.REJECT_REASON_UNKNOWN_CONTRACT, `unknown contract "${name}"`, id)
  // Contract namespaces: a transaction declares only keys of its own contract, before anything reaches a block.
  for (const key of keys) {
    if (!key.startsWith(contract.namespace)) {
      return reject(
        RejectReason.REJECT_REASON_FOREIGN_NAMESPACE,
        `${name} may only declare keys under "${contract.namespace}"; "${key.slice(0, 64)}" is outside its namespace`,
        id
      )
    }
  }
  let args: unknown
  try {
    args = contract.decodeArgs(body.call!.args)
  } catch (e) {
    return reject(
      RejectReason.REJECT_REASON_INVALID_ARGUMENTS,
      `${name} arguments do not decode: ${(e as Error).message}`,
      id
    )
  }
  const argProblem = contract.checkArgs(args)
  if (argProblem !== undefined)
    return reject(RejectReason.REJECT_REASON_INVALID_ARGUMENTS, `${name}: ${argProblem}`, id)
  const declared: DeclaredSets = { readSet: body.readSet, writeSet: body.writeSet }
  const access = contract.accesses(args, declared)
  // A contract that takes its keys from the declared sets (YCSB) needs no check.
  if (access.reads !== body.readSet) {
    for (const key of access.reads) {
      if (keys[sortedIndexOf(keys, key)] !== key) {
        return reject(RejectReason.REJECT_REASON_UNDECLARED_ACCESS, `${name} reads undeclared key "${key}"`, id)
      }
    }
  }
  if (access.writes !== body.writeSet) {
    for (const key of access.writes) {
      if (!body.writeSet.includes(key)) {
        return reject(RejectReason.REJECT_REASON_UNDECLARED_ACCESS, `${name} writes "${key}" outside the write set`, id)
      }
    }
  }
  return {
    ok: true,
    meta: {
      id,
      keys,
      writes,
      statelessCostUs: body.statelessCostUs,
      statefulCostUs: body.statefulCostUs,
      payload: tx
    }
  }
}
