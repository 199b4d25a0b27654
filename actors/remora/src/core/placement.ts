/**
 * Where the stateful part of each transaction runs (§4.5 and the baselines of §6.3):
 *
 * - `sfs`: subgraph-first scheduling, Alg. 1. Each connected component G of the batch's dependency graph goes
 *   whole to the worker with the best score S_i = 0.5·R_i + 0.5·L_i, where R_i = |K ∩ O_i| / |K| is the share of
 *   G's footprint K that worker i owns and L_i = 1 − P_i / max_j P_j its spare load; ties are broken randomly.
 * - `round-robin`, `random`: per transaction, load-oblivious.
 * - `zeus`: per transaction, locality only (the worker owning most of its keys): objects flow to one worker.
 * - `hermes-nr`: Hermes without reordering: per transaction, the same load + locality score as SFS.
 * - `locality`: the locality-only baseline of Fig. 10 (§6.8): per transaction, the worker owning most of its
 *   inputs, ignoring load. Unlike `zeus` its ties are deterministic, broken by the lowest load P (then worker
 *   order), not by the PRNG: objects nobody holds yet go to the least loaded worker, so it spreads a cold start
 *   as well as a locality-only policy can, and then keeps every object where it is (no load-driven migration).
 *
 * Load P_i is the stateful and stateless work (µs) dispatched or planned for worker i and not completed yet.
 */
import type { MetadataReader } from "./object-table.js"
import { ownerOf } from "./object-table.js"
import type { Prng } from "./prng.js"

export type PolicyName = "sfs" | "round-robin" | "random" | "zeus" | "hermes-nr" | "locality"

export const POLICIES: ReadonlyArray<PolicyName> = ["sfs", "round-robin", "random", "zeus", "hermes-nr", "locality"]

/** Scores within this of the best are ties. */
const TIE_EPSILON = 1e-9

/** The workers a policy may choose from and their loads, indexed by owner code. */
export interface Candidates {
  /** Owner codes of the active workers, in a fixed order (by worker id). */
  readonly codes: ReadonlyArray<number>
  /** Load P per owner code (µs of outstanding work); the planner adds what it places. */
  readonly load: Float64Array
}

/** Key ids: a slice of an array (a transaction's keys in a block, a component's footprint). */
export interface KeySpan {
  readonly ids: Int32Array
  readonly from: number
  readonly to: number
}

/** Owner codes whose count `ownedCounts` raised, to zero them again (reused: one allocation per process). */
const touched: Array<number> = []

/** Counts how many of `keys` each owner code owns; `counts` is indexed by code and left zeroed for reuse. */
const ownedCounts = (keys: KeySpan, owners: MetadataReader, counts: Int32Array) => {
  for (let i = keys.from; i < keys.to; i++) {
    const owner = ownerOf(owners.get(keys.ids[i]!))
    if (owner === 0 || owner >= counts.length) continue
    if (counts[owner] === 0) touched.push(owner)
    counts[owner]!++
  }
}

/**
 * Alg. 1 lines 3-8 for one footprint: the candidate with the highest weighted locality + spare load, ties
 * broken by `prng`. `counts` is scratch (zeroed, indexed by owner code).
 */
export const bestCandidate = (
  keys: KeySpan,
  owners: MetadataReader,
  candidates: Candidates,
  weights: { readonly locality: number; readonly load: number },
  prng: Prng,
  counts: Int32Array
): number => {
  const codes = candidates.codes
  if (weights.locality > 0) ownedCounts(keys, owners, counts)
  let maxLoad = 0
  if (weights.load > 0) for (const c of codes) maxLoad = Math.max(maxLoad, candidates.load[c]!)
  let best = -Infinity
  let ties = 0
  let chosen = codes[0]!
  for (const c of codes) {
    const size = keys.to - keys.from
    const r = size === 0 ? 0 : (counts[c] ?? 0) / size
    const l = maxLoad === 0 ? 1 : 1 - candidates.load[c]! / maxLoad
    const s = weights.locality * r + weights.load * l
    if (s > best + TIE_EPSILON) {
      best = s
      ties = 1
      chosen = c
    } else if (s >= best - TIE_EPSILON) {
      // Reservoir sampling over the tied candidates: each is chosen with probability 1/ties.
      ties++
      if (prng.below(ties) === 0) chosen = c
    }
  }
  for (const c of touched) counts[c] = 0
  touched.length = 0
  return chosen
}

/**
 * The `locality` policy for one transaction's keys: the candidate owning most of them; ties (e.g. nobody owns
 * any) go to the lowest load, then to the first in candidate order. No PRNG: the same metadata and loads give
 * the same worker. `counts` is scratch (zeroed, indexed by owner code).
 */
export const mostInputs = (
  keys: KeySpan,
  owners: MetadataReader,
  candidates: Candidates,
  counts: Int32Array
): number => {
  ownedCounts(keys, owners, counts)
  const codes = candidates.codes
  let chosen = codes[0]!
  for (const c of codes) {
    const owned = counts[c] ?? 0
    const best = counts[chosen] ?? 0
    if (owned > best || (owned === best && candidates.load[c]! < candidates.load[chosen]!)) chosen = c
  }
  for (const c of touched) counts[c] = 0
  touched.length = 0
  return chosen
}

export const SFS_WEIGHTS = { locality: 0.5, load: 0.5 } as const
export const ZEUS_WEIGHTS = { locality: 1, load: 0 } as const

/**
 * The stateless router (§4.3: "dispatches stateless parts with a focus on load balancing"): the least-loaded
 * candidate, ties rotating from `cursor` so equal loads spread evenly.
 */
export const leastLoaded = (candidates: Candidates, cursor: { next: number }): number => {
  const codes = candidates.codes
  const n = codes.length
  const start = cursor.next++ % n
  let chosen = codes[start]!
  let best = candidates.load[chosen]!
  for (let k = 1; k < n; k++) {
    const c = codes[(start + k) % n]!
    if (candidates.load[c]! < best) {
      best = candidates.load[c]!
      chosen = c
    }
  }
  return chosen
}
