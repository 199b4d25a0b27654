/**
 * The dependency graph of a batch and its connected components (§4.5, Alg. 1 line 1): vertices are
 * transactions, an edge joins two transactions that access a common object one after the other. Components
 * ("subgraphs") share no object, so placing each one whole on a worker never splits a dependency chain.
 *
 * Components are found with union-find over the batch's keys (two transactions are connected exactly when their
 * keys are), in O(keys · α); `dependencyEdges` builds the graph itself, for tests and traces.
 */
import type { Key } from "./types.js"

export interface Keyed {
  readonly keys: ReadonlyArray<Key>
}

export interface Subgraphs {
  readonly count: number
  /** Component of each transaction, numbered 0.. in order of first appearance in the batch. */
  readonly ofTx: Int32Array
  /** The object footprint K of each component: its distinct keys. */
  readonly keys: ReadonlyArray<ReadonlyArray<Key>>
  /** Transactions per component. */
  readonly sizes: Int32Array
}

const find = (parent: Int32Array, x: number): number => {
  while (parent[x] !== x) {
    parent[x] = parent[parent[x]!]!
    x = parent[x]!
  }
  return x
}

export const subgraphs = (txs: ReadonlyArray<Keyed>): Subgraphs => {
  const node = new Map<Key, number>()
  let total = 0
  for (const tx of txs) total += tx.keys.length
  const parent = new Int32Array(total)
  const first = new Int32Array(txs.length)
  let nodes = 0
  for (let t = 0; t < txs.length; t++) {
    const keys = txs[t]!.keys
    let root = -1
    for (const key of keys) {
      let n = node.get(key)
      if (n === undefined) {
        n = nodes++
        parent[n] = n
        node.set(key, n)
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
    first[t] = keys.length === 0 ? -1 : (node.get(keys[0]!) ?? -1)
  }
  const componentOfRoot = new Map<number, number>()
  const ofTx = new Int32Array(txs.length)
  const sizes: Array<number> = []
  for (let t = 0; t < txs.length; t++) {
    // A transaction without keys (never admitted) would be its own component.
    const root = first[t]! === -1 ? -1 - t : find(parent, first[t]!)
    let c = componentOfRoot.get(root)
    if (c === undefined) {
      c = sizes.length
      componentOfRoot.set(root, c)
      sizes.push(0)
    }
    ofTx[t] = c
    sizes[c]!++
  }
  const keys: Array<Array<Key>> = sizes.map(() => [])
  for (const [key, n] of node) keys[componentOfRoot.get(find(parent, n))!]!.push(key)
  return { count: sizes.length, ofTx, keys, sizes: Int32Array.from(sizes) }
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
