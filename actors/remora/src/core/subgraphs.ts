/**
 * The dependency graph of a batch and its connected components (§4.5, Alg. 1 line 1): vertices are
 * transactions, an edge joins two transactions that access a common object one after the other. Components
 * ("subgraphs") share no object, so placing each one whole on a worker never splits a dependency chain.
 *
 * Components are found with union-find over the batch's keys (two transactions are connected exactly when their
 * keys are), in O(keys · α), on interned key ids with scratch arrays reused from batch to batch (no map per
 * batch). `dependencyEdges` builds the graph itself, for tests and traces.
 */
import { KeyIndex } from "./object-table.js"
import type { Key } from "./types.js"

export interface Keyed {
  readonly keys: ReadonlyArray<Key>
}

/** A batch's keys as ids: transaction t's are ids[start[t] .. start[t+1]). */
export interface KeyedBlock {
  readonly txs: number
  readonly ids: Int32Array
  readonly start: Int32Array
}

export interface Subgraphs {
  readonly count: number
  /** Component of each transaction, numbered 0.. in order of first appearance in the batch. */
  readonly ofTx: Int32Array
  /** The object footprint K of component c, its distinct key ids: keyIds[keyStart[c] .. keyStart[c+1]) (one flat
   *  array: a batch of independent transactions has as many components as transactions). */
  readonly keyIds: Int32Array
  readonly keyStart: Int32Array
  /** Transactions per component. */
  readonly sizes: Int32Array
}

/** Per-key scratch, indexed by key id and stamped per batch so nothing is cleared between batches. */
export class SubgraphScratch {
  node = new Int32Array(1024)
  stamp = new Uint32Array(1024)
  epoch = 0

  reserve(ids: number): void {
    if (ids <= this.node.length) return
    const size = Math.max(ids, this.node.length * 2)
    this.node = new Int32Array(size)
    this.stamp = new Uint32Array(size)
  }
}

const find = (parent: Int32Array, x: number): number => {
  while (parent[x] !== x) {
    parent[x] = parent[parent[x]!]!
    x = parent[x]!
  }
  return x
}

export const subgraphs = (block: KeyedBlock, keyCount: number, scratch: SubgraphScratch): Subgraphs => {
  scratch.reserve(keyCount)
  const epoch = ++scratch.epoch
  const { node, stamp } = scratch
  const parent = new Int32Array(block.ids.length)
  const keyOfNode = new Int32Array(block.ids.length)
  const first = new Int32Array(block.txs)
  let nodes = 0
  for (let t = 0; t < block.txs; t++) {
    const from = block.start[t]!
    const to = block.start[t + 1]!
    let root = -1
    for (let i = from; i < to; i++) {
      const id = block.ids[i]!
      let n: number
      if (stamp[id] === epoch) n = node[id]!
      else {
        n = nodes++
        parent[n] = n
        keyOfNode[n] = id
        node[id] = n
        stamp[id] = epoch
      }
      const r = find(parent, n)
      if (root === -1) root = r
      else if (r !== root) {
        // Union by smaller index keeps roots stable in appearance order; paths are halved in find.
        if (r < root) {
          parent[root] = r
          root = r
        } else parent[r] = root
      }
    }
    first[t] = from === to ? -1 : node[block.ids[from]!]!
  }
  const componentOfRoot = new Int32Array(nodes).fill(-1)
  const ofTx = new Int32Array(block.txs)
  const sizes: Array<number> = []
  for (let t = 0; t < block.txs; t++) {
    // A transaction without keys (never admitted) is its own component.
    if (first[t] === -1) {
      ofTx[t] = sizes.length
      sizes.push(1)
      continue
    }
    const root = find(parent, first[t]!)
    let c = componentOfRoot[root]!
    if (c === -1) {
      c = sizes.length
      componentOfRoot[root] = c
      sizes.push(0)
    }
    ofTx[t] = c
    sizes[c]!++
  }
  const count = sizes.length
  const keyStart = new Int32Array(count + 1)
  const componentOfNode = new Int32Array(nodes)
  for (let n = 0; n < nodes; n++) {
    const c = componentOfRoot[find(parent, n)]!
    componentOfNode[n] = c
    keyStart[c + 1]!++
  }
  for (let c = 0; c < count; c++) keyStart[c + 1]! += keyStart[c]!
  const fill = keyStart.slice(0, count)
  const keyIds = new Int32Array(nodes)
  for (let n = 0; n < nodes; n++) keyIds[fill[componentOfNode[n]!]!++] = keyOfNode[n]!
  return { count, ofTx, keyIds, keyStart, sizes: Int32Array.from(sizes) }
}

/** Interns `txs`' keys into `index` as a KeyedBlock. */
export const keyedBlock = (txs: ReadonlyArray<Keyed>, index: KeyIndex): KeyedBlock => {
  const start = new Int32Array(txs.length + 1)
  let total = 0
  for (let t = 0; t < txs.length; t++) {
    start[t] = total
    total += txs[t]!.keys.length
  }
  start[txs.length] = total
  const ids = new Int32Array(total)
  let i = 0
  for (const tx of txs) for (const key of tx.keys) ids[i++] = index.intern(key)
  return { txs: txs.length, ids, start }
}

/** Subgraphs of transactions given by their key names (tests, tools). */
export const subgraphsOf = (
  txs: ReadonlyArray<Keyed>
): Subgraphs & { readonly names: ReadonlyArray<ReadonlyArray<Key>> } => {
  const index = new KeyIndex()
  const g = subgraphs(keyedBlock(txs, index), index.size, new SubgraphScratch())
  const names = Array.from({ length: g.count }, (_, c) =>
    Array.from(g.keyIds.subarray(g.keyStart[c], g.keyStart[c + 1]), (id) => index.name(id))
  )
  return { ...g, names }
}

/**
 * The dependency graph's edges: (i, j) for i < j when j is the next transaction after i to access some key
 * ("immediate dependencies induced by shared objects").
 */
export const dependencyEdges = (txs: ReadonlyArray<Keyed>): ReadonlyArray<readonly [number, number]> => {
  const last = new Map<Key, number>()
  const edges: Array<readonly [number, number]> = []
  const seen = new Set<string>()
  for (let t = 0; t < txs.length; t++) {
    for (const key of txs[t]!.keys) {
      const prior = last.get(key)
      if (prior !== undefined && !seen.has(`${prior},${t}`)) {
        seen.add(`${prior},${t}`)
        edges.push([prior, t])
      }
      last.set(key, t)
    }
  }
  return edges
}
