/**
 * The properties of the paper's Appendix D, and those a restarting system owes its clients, checked on what a
 * simulated run did (world.ts) against the sequential reference executor run on the committed chain:
 *
 * - Theorem 1 (consensus-ordered serializability): the final state (every key's newest version, wherever it
 *   is: a worker, or the coordinator holding its persisted version) and every receipt's outcome equal the
 *   reference's; no key is held twice, no stale version is held.
 * - Lemma 8 (version value uniqueness): every copy of a version (k, i) seen anywhere (produced, transferred,
 *   reported for a snapshot, persisted, served by the coordinator) has the value the reference gives (k, i);
 *   and a transaction executed again after a recovery produced exactly what its first execution did (checked
 *   as it happens, world.ts).
 * - Lemma 4 (per-key versions are consecutive): the versions of k consumed, in consensus order of their
 *   consumers, are exactly 0, 1, 2, ... (one consumer each, no gap; a re-execution consumes the same one).
 * - Theorem 3 / liveness (A8): every committed transaction completes once faults stop; without crashes each
 *   executes exactly once. Every submitted transaction is committed.
 * - Committed once: no id is in two blocks, no height is written twice.
 * - Receipts stable: one receipt per id, never changed, still on disk at the end (GetReceipt answers it).
 */
import type { Transaction } from "@reef/proto"
import { genesisValue } from "../contracts/genesis.js"
import type { CoordinatorState } from "../core/coordinator.js"
import { COORDINATOR_OWNER, ownerOf, versionOf } from "../core/object-table.js"
import type { Key } from "../core/types.js"
import { ReferenceExecutor } from "../state/reference.js"
import type { Violation } from "./violation.js"
import { describeReceipt, type SimRecord, verifyInSim } from "./world.js"

export type { Property, Violation } from "./violation.js"

const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

const statusOf = { executed: "executed", "invalid-signature": "invalid-signature", aborted: "aborted" } as const

/** The version of `key` the coordinator holds as its owner (the shell's `held`: what its state digest adds). */
export const coordinatorHeld = (
  c: CoordinatorState<unknown>,
  key: Key
): { readonly version: number; readonly value: Uint8Array } | undefined => {
  const id = c.keys.find(key)
  const packed = id < 0 ? 0 : c.router.get(id)
  if (ownerOf(packed) !== COORDINATOR_OWNER) return undefined
  const version = versionOf(packed)
  if (version === 0) return { version, value: genesisValue(key) }
  const persisted = c.snapshot.get(key)
  return persisted?.version === version ? persisted : undefined
}

const notFinished = (r: SimRecord): Violation => {
  const missing: Array<number> = []
  for (let seq = 1; seq <= r.committed.length; seq++) if (!r.receipts.has(seq)) missing.push(seq)
  const uncommitted = [...r.submitted].filter((id) => !r.commitCount.has(id)).length
  return {
    property: r.config.crashes === undefined ? "Theorem 3" : "liveness",
    message:
      `run did not finish by ${r.config.maxTimeMs} ms: ${missing.length} committed transactions never completed ` +
      `(seqs ${missing.slice(0, 8).join(", ")}${missing.length > 8 ? ", ..." : ""}), ${uncommitted} not committed`
  }
}

/** Committed once, the chain contiguous, one stable receipt per transaction. */
const checkChainAndReceipts = (r: SimRecord): Violation | undefined => {
  let seq = 1
  for (let height = 1; height <= r.chain.size; height++) {
    const block = r.chain.get(height)
    if (block === undefined)
      return { property: "committed once", message: `the chain has no block at height ${height}` }
    if (block.firstSeq !== seq) {
      return { property: "committed once", message: `block ${height} starts at seq ${block.firstSeq}, not ${seq}` }
    }
    seq += block.ids.length
  }
  if (seq - 1 !== r.committed.length) {
    return { property: "committed once", message: `${r.committed.length} seqs committed, the chain holds ${seq - 1}` }
  }
  for (const id of r.submitted) {
    const n = r.commitCount.get(id) ?? 0
    if (n !== 1) return { property: "Theorem 3", message: `transaction ${id} committed ${n} times` }
  }
  const crashes = r.config.crashes !== undefined
  for (let s = 1; s <= r.committed.length; s++) {
    const executions = r.executions.get(s) ?? 0
    if (executions === 0) return { property: "Theorem 3", message: `seq ${s} never executed` }
    if (executions > 1 && !crashes) return { property: "Theorem 3", message: `seq ${s} executed ${executions} times` }
    const receipts = r.receipts.get(s)?.count ?? 0
    if (receipts !== 1) {
      return { property: crashes ? "receipts stable" : "Theorem 3", message: `seq ${s} got ${receipts} receipts` }
    }
  }
  for (const [id, given] of r.givenReceipts) {
    const kept = r.disk.receipt(id)
    if (kept === undefined) return { property: "receipts stable", message: `${id}: its receipt is no longer on disk` }
    if (describeReceipt(kept) !== describeReceipt(given) || kept.seq !== given.seq) {
      return {
        property: "receipts stable",
        message: `${id}: given ${describeReceipt(given)}, the disk now says ${describeReceipt(kept)}`
      }
    }
    const tx = r.committed[given.seq - 1]
    if (tx?.id !== id) return { property: "receipts stable", message: `${id}: its receipt names seq ${given.seq}` }
  }
  for (const id of r.submitted) {
    if (!r.clientReceipts.has(id)) return { property: "liveness", message: `the client of ${id} has no receipt` }
  }
  return undefined
}

export const checkRun = (r: SimRecord): Violation | undefined => {
  if (r.crash !== undefined) return { property: "no crash", message: r.crash }
  for (const [id, n] of r.commitCount) {
    if (n > 1) return { property: "committed once", message: `transaction ${id} committed ${n} times` }
  }
  if (r.online.length > 0) return r.online[0]
  if (r.finishedAtMs === undefined) return notFinished(r)
  const chain = checkChainAndReceipts(r)
  if (chain !== undefined) return chain

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

  // Lemma 4: per key, consumed versions in consensus order are 0, 1, 2, ... with one consumer each (a seq
  // executed again after a recovery must consume what it consumed the first time).
  for (const [key, n] of accesses) {
    const bySeq = new Map<number, number>()
    for (const c of r.consumed.get(key) ?? []) {
      const before = bySeq.get(c.seq)
      if (before !== undefined && before !== c.version) {
        return {
          property: "Lemma 4",
          message: `${key}: seq ${c.seq} consumed version ${before}, and version ${c.version} when executed again`
        }
      }
      bySeq.set(c.seq, c.version)
    }
    const list = [...bySeq].sort((a, b) => a[0] - b[0])
    if (list.length !== n) {
      return { property: "Lemma 4", message: `${key}: ${n} accesses in consensus order, ${list.length} consumptions` }
    }
    for (let i = 0; i < list.length; i++) {
      if (list[i]![1] !== i) {
        return {
          property: "Lemma 4",
          message: `${key}: the ${i + 1}th access in consensus order (seq ${list[i]![0]}) consumed version ${list[i]![1]}, not ${i}`
        }
      }
    }
  }

  // Lemma 8: every copy of (k, i) anywhere has the sequential execution's value of (k, i).
  const copies = [...r.copies, ...r.disk.snapshot().map((o) => ({ ...o, where: "the snapshot on disk" }))]
  for (const copy of copies) {
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
  const held = (who: string, key: Key, version: number, value: Uint8Array): Violation | undefined => {
    const other = holders.get(key)
    if (other !== undefined) return { property: "Theorem 1", message: `${key} is held by both ${other} and ${who}` }
    holders.set(key, who)
    const expected = reference.get(key)
    if (version !== expected.version) {
      return {
        property: "Theorem 1",
        message: `${who} holds (${key}, ${version}); the sequential execution ends at version ${expected.version}`
      }
    }
    if (!equalBytes(value, expected.value)) {
      return {
        property: "Theorem 1",
        message: `${who} holds ${key} with a value the sequential execution does not end with`
      }
    }
    return undefined
  }
  for (const [id, w] of r.workers) {
    for (const [key, o] of w.objects) {
      const v = held(id, key, o.version, o.value)
      if (v !== undefined) return v
    }
  }
  for (const [key] of reference.entries()) {
    const c = coordinatorHeld(r.coordinator, key)
    if (c !== undefined && c.version > 0) {
      const v = held("the coordinator", key, c.version, c.value)
      if (v !== undefined) return v
    }
  }
  for (const [key] of reference.entries()) {
    if (!holders.has(key)) return { property: "Theorem 1", message: `nobody holds the newest version of ${key}` }
  }
  return undefined
}
