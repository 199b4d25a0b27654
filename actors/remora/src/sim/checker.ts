/**
 * The properties of the paper's Appendix D, checked on what a simulated run did (world.ts) against the
 * sequential reference executor run on the committed order:
 *
 * - Theorem 1 (consensus-ordered serializability): the final state (every key's newest version, wherever it
 *   is) and every transaction's outcome equal the reference's.
 * - Lemma 8 (version value uniqueness): every copy of a version (k, i) seen anywhere, produced or transferred,
 *   has the value the reference gives (k, i).
 * - Lemma 4 (per-key versions are consecutive): the versions of k consumed, in consensus order of their
 *   consumers, are exactly 0, 1, 2, ... (one consumer each, no gap).
 * - Theorem 3 (liveness, here: exactly once): every committed transaction executes exactly once and gets one
 *   receipt; every submitted transaction is committed exactly once (a rejected block's are proposed again).
 */
import type { Transaction } from "@reef/proto"
import type { Key } from "../core/types.js"
import { ReferenceExecutor } from "../state/reference.js"
import { type SimRecord, verifyInSim } from "./world.js"

export type Property = "Theorem 1" | "Lemma 8" | "Lemma 4" | "Theorem 3" | "no crash"

export interface Violation {
  readonly property: Property
  readonly message: string
}

const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

const statusOf = { executed: "executed", "invalid-signature": "invalid-signature", aborted: "aborted" } as const

export const checkRun = (r: SimRecord): Violation | undefined => {
  if (r.crash !== undefined) return { property: "no crash", message: r.crash }

  // Theorem 3: no lost or doubled commits, every committed transaction executed once, one receipt each.
  for (const id of r.submitted) {
    const n = r.commitCount.get(id) ?? 0
    if (n !== 1 && r.finishedAtMs !== undefined) {
      return { property: "Theorem 3", message: `transaction ${id} committed ${n} times` }
    }
  }
  for (let seq = 1; seq <= r.committed.length; seq++) {
    const executions = r.executions.get(seq) ?? 0
    if (executions > 1) return { property: "Theorem 3", message: `seq ${seq} executed ${executions} times` }
    const receipts = r.receipts.get(seq)?.count ?? 0
    if (receipts > 1) return { property: "Theorem 3", message: `seq ${seq} got ${receipts} receipts` }
  }
  if (r.finishedAtMs === undefined) {
    const missing: Array<number> = []
    for (let seq = 1; seq <= r.committed.length; seq++) if ((r.executions.get(seq) ?? 0) === 0) missing.push(seq)
    return {
      property: "Theorem 3",
      message: `run did not finish by ${r.config.maxTimeMs} ms: ${missing.length} committed transactions never executed (seqs ${missing.slice(0, 8).join(", ")}${missing.length > 8 ? ", ..." : ""}), ${r.submitted.size - r.committed.length} not committed`
    }
  }
  for (let seq = 1; seq <= r.committed.length; seq++) {
    if ((r.executions.get(seq) ?? 0) !== 1) return { property: "Theorem 3", message: `seq ${seq} never executed` }
  }

  // The reference, on the committed order.
  const reference = new ReferenceExecutor({ recordHistory: true })
  const accesses = new Map<Key, number>()
  for (let i = 0; i < r.committed.length; i++) {
    const tx = r.committed[i]
    if (tx === undefined) return { property: "Theorem 3", message: `seq ${i + 1} missing from the committed order` }
    const step = reference.apply(tx, verifyInSim(tx.payload as Transaction))
    for (const k of tx.keys) accesses.set(k, (accesses.get(k) ?? 0) + 1)
    const receipt = r.receipts.get(i + 1)
    if (receipt === undefined) return { property: "Theorem 3", message: `seq ${i + 1} has no receipt` }
    if (receipt.status !== statusOf[step.status]) {
      return {
        property: "Theorem 1",
        message: `seq ${i + 1} (${tx.id}) ended ${receipt.status}, the sequential execution says ${step.status}`
      }
    }
  }

  // Lemma 4: per key, consumed versions in consensus order are 0, 1, 2, ... with one consumer each.
  for (const [key, n] of accesses) {
    const list = [...(r.consumed.get(key) ?? [])].sort((a, b) => a.seq - b.seq)
    if (list.length !== n) {
      return { property: "Lemma 4", message: `${key}: ${n} accesses in consensus order, ${list.length} consumptions` }
    }
    for (let i = 0; i < list.length; i++) {
      if (list[i]!.version !== i) {
        return {
          property: "Lemma 4",
          message: `${key}: the ${i + 1}th access in consensus order (seq ${list[i]!.seq}) consumed version ${list[i]!.version}, not ${i}`
        }
      }
    }
  }

  // Lemma 8: every copy of (k, i) anywhere has the sequential execution's value of (k, i).
  for (const copy of r.copies) {
    const expected = reference.valueAt(copy.key, copy.version)
    if (expected === undefined) {
      return {
        property: "Lemma 8",
        message: `(${copy.key}, ${copy.version}) at ${copy.where} is a version the sequential execution never made`
      }
    }
    if (!equalBytes(expected, copy.value)) {
      return {
        property: "Lemma 8",
        message: `(${copy.key}, ${copy.version}) at ${copy.where} differs from its other copies`
      }
    }
  }

  // Theorem 1: the newest version of every key, wherever it is, is the reference's; no stray copies.
  const holders = new Map<Key, string>()
  for (const [id, w] of r.workers) {
    for (const [key, held] of w.objects) {
      const other = holders.get(key)
      if (other !== undefined) return { property: "Theorem 1", message: `${key} is held by both ${other} and ${id}` }
      holders.set(key, id)
      const expected = reference.get(key)
      if (held.version !== expected.version) {
        return {
          property: "Theorem 1",
          message: `${id} holds (${key}, ${held.version}); the sequential execution ends at version ${expected.version}`
        }
      }
      if (!equalBytes(held.value, expected.value)) {
        return {
          property: "Theorem 1",
          message: `${id} holds ${key} with a value the sequential execution does not end with`
        }
      }
    }
  }
  for (const [key] of reference.entries()) {
    if (!holders.has(key)) return { property: "Theorem 1", message: `no worker holds the newest version of ${key}` }
  }
  return undefined
}
