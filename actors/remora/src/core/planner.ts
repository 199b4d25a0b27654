/**
 * PlanBlock (App. C, Alg. 2): for a batch in a given order, the input version of every access (AssignVersions,
 * App. A.6), the worker of every transaction (PlaceUnits, placement.ts) and the holder of every input version
 * (the dispatch annotation of §4.2: "the Coordinator annotates the request with the current owners for each
 * object version"). One linear walk in batch order does versions and sources, so both follow the order.
 *
 * The walk writes into `meta`: the router's table when planning a committed block, or the scheduler's copy when
 * planning a proposal during the consensus window. A proposal's plan keeps the final metadata of every key it
 * touched (`finals`), so adopting it at commit is applying those to the router's table.
 */
import { type MetadataWriter, ownerOf, pack, versionOf } from "./object-table.js"
import { bestCandidate, type Candidates, type PolicyName, SFS_WEIGHTS, ZEUS_WEIGHTS } from "./placement.js"
import type { Prng } from "./prng.js"
import { subgraphs } from "./subgraphs.js"
import type { Key, TxMeta } from "./types.js"

/** Source code of an input version that is the key's initial value, derived by the worker itself. */
export const GENESIS_CODE = -1

export interface PlanOptions {
  readonly policy: PolicyName
  /** Version 0 of a key the coordinator owns is derived by the worker (GENESIS_CODE), not fetched from it. */
  readonly genesisAtWorkers: boolean
  /** Keep `finals` (for a plan adopted later); not needed when planning straight into the router's table. */
  readonly recordFinals: boolean
}

export interface Plan<P = unknown> {
  readonly proposal: number
  readonly txs: ReadonlyArray<TxMeta<P>>
  /** Owner code of the worker of each transaction. */
  readonly placement: Int32Array
  /** Transaction j's inputs are at [keyStart[j], keyStart[j+1]) of `versions` and `sources`, in its key order. */
  readonly keyStart: Int32Array
  readonly versions: Float64Array
  /** Owner code of each input version's holder when the transaction is dispatched; GENESIS_CODE for (k, 0). */
  readonly sources: Int32Array
  /** Packed metadata of every touched key after the block (empty unless `recordFinals`). */
  readonly finals: ReadonlyMap<Key, number>
  /** Stateful load placed on each owner code (µs). */
  readonly load: Float64Array
  readonly subgraphs: number
}

/** A transaction's weight in the load P (µs; a transaction without synthetic cost still counts). */
export const statefulWeight = (tx: TxMeta): number => Math.max(1, tx.statefulCostUs)
export const statelessWeight = (tx: TxMeta): number => Math.max(1, tx.statelessCostUs)

/** Where transactions go, in order; `roundRobin` is the policy's cursor, carried from block to block. */
export interface PlacementCursor {
  roundRobin: number
}

const placeSubgraphs = <P>(
  txs: ReadonlyArray<TxMeta<P>>,
  meta: MetadataWriter,
  candidates: Candidates,
  prng: Prng,
  counts: Int32Array,
  placement: Int32Array
): number => {
  const g = subgraphs(txs)
  const weight = new Float64Array(g.count)
  for (let t = 0; t < txs.length; t++) weight[g.ofTx[t]!]! += statefulWeight(txs[t]!)
  const chosen = new Int32Array(g.count)
  for (let c = 0; c < g.count; c++) {
    const w = bestCandidate(g.keys[c]!, meta, candidates, SFS_WEIGHTS, prng, counts)
    chosen[c] = w
    candidates.load[w]! += weight[c]!
  }
  for (let t = 0; t < txs.length; t++) placement[t] = chosen[g.ofTx[t]!]!
  return g.count
}

/** Per-transaction policies choose as the walk reaches each transaction, seeing the owners it has updated. */
const placeOne = (
  tx: TxMeta,
  policy: PolicyName,
  meta: MetadataWriter,
  candidates: Candidates,
  cursor: PlacementCursor,
  prng: Prng,
  counts: Int32Array
): number => {
  const codes = candidates.codes
  switch (policy) {
    case "round-robin":
      return codes[cursor.roundRobin++ % codes.length]!
    case "random":
      return codes[prng.below(codes.length)]!
    case "zeus":
      return bestCandidate(tx.keys, meta, candidates, ZEUS_WEIGHTS, prng, counts)
    case "hermes-nr":
      return bestCandidate(tx.keys, meta, candidates, SFS_WEIGHTS, prng, counts)
    case "sfs":
      throw new Error("sfs places whole subgraphs")
  }
}

/**
 * Plans `txs` (in the order given) on `meta`, which it updates. `candidates.load` gains the placed load.
 * `counts` is scratch indexed by owner code (zeroed).
 */
export const planBlock = <P>(
  proposal: number,
  txs: ReadonlyArray<TxMeta<P>>,
  meta: MetadataWriter,
  candidates: Candidates,
  cursor: PlacementCursor,
  prng: Prng,
  options: PlanOptions
): Plan<P> => {
  if (candidates.codes.length === 0) throw new Error("planBlock: no worker to place on")
  const counts = new Int32Array(candidates.load.length)
  const placement = new Int32Array(txs.length)
  const keyStart = new Int32Array(txs.length + 1)
  let inputs = 0
  for (let t = 0; t < txs.length; t++) {
    keyStart[t] = inputs
    inputs += txs[t]!.keys.length
  }
  keyStart[txs.length] = inputs
  const load = new Float64Array(candidates.load.length)
  const count = options.policy === "sfs" ? placeSubgraphs(txs, meta, candidates, prng, counts, placement) : txs.length
  const versions = new Float64Array(inputs)
  const sources = new Int32Array(inputs)
  const finals = new Map<Key, number>()
  let i = 0
  for (let t = 0; t < txs.length; t++) {
    const tx = txs[t]!
    let worker: number
    if (options.policy === "sfs") worker = placement[t]!
    else {
      worker = placeOne(tx, options.policy, meta, candidates, cursor, prng, counts)
      placement[t] = worker
      candidates.load[worker]! += statefulWeight(tx)
    }
    load[worker]! += statefulWeight(tx)
    for (const key of tx.keys) {
      const packed = meta.get(key)
      const version = versionOf(packed)
      const owner = ownerOf(packed)
      versions[i] = version
      sources[i] = owner === 0 && version === 0 && options.genesisAtWorkers ? GENESIS_CODE : owner
      const next = pack(version + 1, worker)
      meta.set(key, next)
      if (options.recordFinals) finals.set(key, next)
      i++
    }
  }
  return { proposal, txs, placement, keyStart, versions, sources, finals, load, subgraphs: count }
}

/** Adopts a plan computed on the scheduler's copy: its final metadata becomes the router's. */
export const adoptPlan = (plan: Plan, router: MetadataWriter): void => {
  for (const [key, packed] of plan.finals) router.set(key, packed)
}
