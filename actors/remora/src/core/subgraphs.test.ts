import { describe, expect, it } from "vitest"
import { tx } from "../test/core-fixtures.js"
import { Prng } from "./prng.js"
import { dependencyEdges, subgraphsOf } from "./subgraphs.js"

/** Components by BFS over the explicit dependency graph: the definition subgraphsOf() must agree with. */
const componentsByBfs = (n: number, edges: ReadonlyArray<readonly [number, number]>): Int32Array => {
  const adj: Array<Array<number>> = Array.from({ length: n }, () => [])
  for (const [a, b] of edges) {
    adj[a]!.push(b)
    adj[b]!.push(a)
  }
  const comp = new Int32Array(n).fill(-1)
  let c = 0
  for (let s = 0; s < n; s++) {
    if (comp[s] !== -1) continue
    const stack = [s]
    comp[s] = c
    while (stack.length > 0) {
      for (const m of adj[stack.pop()!]!) {
        if (comp[m] === -1) {
          comp[m] = c
          stack.push(m)
        }
      }
    }
    c++
  }
  return comp
}

describe("dependency graph and subgraphs (§4.5)", () => {
  it('"vertices are transactions and edges capture immediate dependencies induced by shared objects"', () => {
    const batch = [tx("a", ["x", "y"]), tx("b", ["y"]), tx("c", ["z"]), tx("d", ["x", "z"])]
    expect(dependencyEdges(batch)).toEqual([
      [0, 1],
      [0, 3],
      [2, 3]
    ])
    const g = subgraphsOf(batch)
    expect(g.count).toBe(1)
    expect([...g.names[0]!].sort()).toEqual(["x", "y", "z"])
  })

  it("components are numbered in order of first appearance and carry their footprint K", () => {
    const g = subgraphsOf([tx("a", ["p"]), tx("b", ["q"]), tx("c", ["p", "r"]), tx("d", ["s"])])
    expect([...g.ofTx]).toEqual([0, 1, 0, 2])
    expect(g.names.map((k) => [...k].sort())).toEqual([["p", "r"], ["q"], ["s"]])
    expect([...g.sizes]).toEqual([2, 1, 1])
  })

  it("union-find over keys finds exactly the connected components of the dependency graph", () => {
    const prng = new Prng(42)
    for (let round = 0; round < 200; round++) {
      const batch = Array.from({ length: prng.int(1, 40) }, (_, i) =>
        tx(
          `t${i}`,
          Array.from({ length: prng.int(1, 4) }, () => `k${prng.below(prng.int(2, 60))}`)
        )
      )
      const g = subgraphsOf(batch)
      const bfs = componentsByBfs(batch.length, dependencyEdges(batch))
      // Same partition: i and j share a component in one exactly when they do in the other.
      const disagreements: Array<string> = []
      for (let i = 0; i < batch.length; i++) {
        for (let j = 0; j < batch.length; j++) {
          if ((g.ofTx[i] === g.ofTx[j]) !== (bfs[i] === bfs[j])) disagreements.push(`${i},${j}`)
        }
      }
      expect(disagreements).toEqual([])
    }
  })
})
