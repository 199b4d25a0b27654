/**
 * PlanBlock (App. C, Alg. 2): for a batch in a given order, the input version of every access (AssignVersions,
 * App. A.6), the worker of every transaction (PlaceUnits, placement.ts) and the holder of every input version
 * (the dispatch annotation of §4.2: "the Coordinator annotates the request with the current owners for each
 * object version"). One linear walk in batch order does versions and sources, so both follow the order.
 *
 * The walk writes into `meta`: the router's table when planning a committed block, or the scheduler's copy when
 * planning a proposal during the consensus window. A plan keeps the metadata it wrote for each access
 * (`written`, aligned with the block's key ids), so adopting it at commit is replaying those writes on the
 * router's table.
 */
import { type MetadataWriter, ownerOf, pack, versionOf } from "./object-table.js"
import { bestCandidate, type Candidates, mostInputs, type PolicyName, SFS_WEIGHTS, ZEUS_WEIGHTS } from "./placement.js"
import type { Prng } from "./prng.js"
import { type KeyedBlock, SubgraphScratch, subgraphs } from "./subgraphs.js"
import type { TxMeta } from "./types.js"

/** Source code of an input version that is the key's initial value, derived by the worker itself. */
export const GENESIS_CODE = -1

export interface PlanOptions {
  readonly policy: PolicyName
  /** Version 0 of a key the coordinator owns is derived by the worker (GENESIS_CODE), not fetched from it. */
  readonly genesisAtWorkers: boolean
}

export interface Plan<P = unknown> {
  readonly proposal: number
  readonly txs: ReadonlyArray<TxMeta<P>>
  /** The batch's key ids (its transactions' keys, flattened in order). */
  readonly block: KeyedBlock
  /** Owner code of the worker of each transaction. */
  readonly placement: Int32Array
  /** Input version of each access, aligned with `block.ids` (transaction t's are at block.start[t]..). */
  readonly versions: Float64Array
  /** Owner code of each input version's holder when the transaction is dispatched; GENESIS_CODE for (k, 0). */
  readonly sources: Int32Array
  /** Packed metadata each access wrote (replayed in order when the plan is adopted). */
  readonly written: Float64Array
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

/** Scratch arrays a planner reuses from batch to batch (sized by key ids and owner codes). */
export class PlannerScratch {
  readonly subgraphs = new SubgraphScratch()
  counts = new Int32Array(16)

  countsFor(codes: number): Int32Array {
    if (this.counts.length < codes) this.counts = new Int32Array(Math.max(codes, this.counts.length * 2))
    return this.counts
  }
}

const placeSubgraphs = <P>(
  txs: ReadonlyArray<TxMeta<P>>,
  block: KeyedBlock,
  keyCount: number,
  meta: MetadataWriter,
  candidates: Candidates,
  prng: Prng,
  scratch: PlannerScratch,
  placement: Int32Array
): number => {
  const g = subgraphs(block, keyCount, scratch.subgraphs)
  const weight = new Float64Array(g.count)
  for (let t = 0; t < txs.length; t++) weight[g.ofTx[t]!]! += statefulWeight(txs[t]!)
  const chosen = new Int32Array(g.count)
  const counts = scratch.countsFor(candidates.load.length)
  const span = { ids: g.keyIds, from: 0, to: 0 }
  for (let c = 0; c < g.count; c++) {
    span.from = g.keyStart[c]!
    span.to = g.keyStart[c + 1]!
    const w = bestCandidate(span, meta, candidates, SFS_WEIGHTS, prng, counts)
    chosen[c] = w
    candidates.load[w]! += weight[c]!
  }
  for (let t = 0; t < txs.length; t++) placement[t] = chosen[g.ofTx[t]!]!
  return g.count
}

/** Per-transaction policies choose as the walk reaches each transaction, seeing the owners it has updated. */
const placeOne = (
  block: KeyedBlock,
  t: number,
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
      return bestCandidate(
        { ids: block.ids, from: block.start[t]!, to: block.start[t + 1]! },
        meta,
        candidates,
        ZEUS_WEIGHTS,
        prng,
        counts
      )
    case "hermes-nr":
      return bestCandidate(
        { ids: block.ids, from: block.start[t]!, to: block.start[t + 1]! },
        meta,
        candidates,
        SFS_WEIGHTS,
        prng,
        counts
      )
    case "locality":
      return mostInputs({ ids: block.ids, from: block.start[t]!, to: block.start[t + 1]! }, meta, candidates, counts)
    case "sfs":
      throw new Error("sfs places whole subgraphs")
  }
}

/**
 * Plans `txs` (in the order given; their key ids in `block`) on `meta`, which it updates. `candidates.load`
 * gains the placed load. `keyCount` bounds the key ids (scratch sizes).
 */
export const planBlock = <P>(
  proposal: number,
  txs: ReadonlyArray<TxMeta<P>>,
  block: KeyedBlock,
  keyCount: number,
  meta: MetadataWriter,
  candidates: Candidates,
  cursor: PlacementCursor,
  prng: Prng,
  options: PlanOptions,
  scratch: PlannerScratch
): Plan<P> => {
  if (candidates.codes.length === 0) throw new Error("planBlock: no worker to place on")
  const counts = scratch.countsFor(candidates.load.length)
  const placement = new Int32Array(txs.length)
  const load = new Float64Array(candidates.load.length)
  const count =
    options.policy === "sfs"
      ? placeSubgraphs(txs, block, keyCount, meta, candidates, prng, scratch, placement)
      : txs.length
  const inputs = block.ids.length
  const versions = new Float64Array(inputs)
  const sources = new Int32Array(inputs)
  const written = new Float64Array(inputs)
  for (let t = 0; t < txs.length; t++) {
    const tx = txs[t]!
    let worker: number
    if (options.policy === "sfs") worker = placement[t]!
    else {
      worker = placeOne(block, t, options.policy, meta, candidates, cursor, prng, counts)
      placement[t] = worker
      candidates.load[worker]! += statefulWeight(tx)
    }
    load[worker]! += statefulWeight(tx)
    const to = block.start[t + 1]!
    for (let i = block.start[t]!; i < to; i++) {
      const id = block.ids[i]!
      const packed = meta.get(id)
      const version = versionOf(packed)
      const owner = ownerOf(packed)
      versions[i] = version
      sources[i] = owner === 0 && version === 0 && options.genesisAtWorkers ? GENESIS_CODE : owner
      const next = pack(version + 1, worker)
      meta.set(id, next)
      written[i] = next
    }
  }
  return { proposal, txs, block, placement, versions, sources, written, load, subgraphs: count }
}

/** Adopts a plan computed on the scheduler's copy: its writes, replayed in order, become the router's. */
export const adoptPlan = (plan: Plan, router: MetadataWriter): void => {
  const ids = plan.block.ids
  for (let i = 0; i < ids.length; i++) router.set(ids[i]!, plan.written[i]!)
}
