import { describe, expect, it } from "vitest"
import { tx } from "../test/core-fixtures.js"
import { ObjectTable, pack, WorkerRegistry } from "./object-table.js"
import { bestCandidate, leastLoaded, SFS_WEIGHTS } from "./placement.js"
import { planBlock } from "./planner.js"
import { Prng } from "./prng.js"

const setup = (workers: ReadonlyArray<string>) => {
  const registry = new WorkerRegistry()
  const codes = workers.map((w) => registry.codeOf(w))
  return { registry, codes, load: new Float64Array(registry.maxCode + 1), table: new ObjectTable() }
}

describe("SFS placement (Alg. 1)", () => {
  it('"R_i ← |K ∩ O_i|/|K|; L_i ← 1 − P_i/max_j P_j; S_i ← 0.5 R_i + 0.5 L_i": locality and spare load in equal parts', () => {
    const { codes, load, table } = setup(["w1", "w2", "w3"])
    const [w1, w2, w3] = codes as [number, number, number]
    // w1 owns 3 of the 4 keys but is the busiest; w2 owns 1 and is idle; w3 owns none and is half busy.
    table.set("a", pack(1, w1))
    table.set("b", pack(1, w1))
    table.set("c", pack(1, w1))
    table.set("d", pack(1, w2))
    load[w1] = 100
    load[w2] = 0
    load[w3] = 50
    const counts = new Int32Array(load.length)
    // S1 = 0.5·0.75 + 0.5·0 = 0.375; S2 = 0.5·0.25 + 0.5·1 = 0.625; S3 = 0 + 0.5·0.5 = 0.25.
    expect(bestCandidate(["a", "b", "c", "d"], table, { codes, load }, SFS_WEIGHTS, new Prng(1), counts)).toBe(w2)
    load[w2] = 90
    // S1 = 0.375; S2 = 0.125 + 0.05 = 0.175; S3 = 0.25.
    expect(bestCandidate(["a", "b", "c", "d"], table, { codes, load }, SFS_WEIGHTS, new Prng(1), counts)).toBe(w1)
    expect([...counts]).toEqual(new Array(counts.length).fill(0))
  })

  it('"i★ ← arg max_i S_i (break ties randomly)": every tied worker gets chosen for some seed', () => {
    const { codes, load, table } = setup(["w1", "w2", "w3"])
    const chosen = new Set<number>()
    for (let seed = 1; seed < 60; seed++) {
      chosen.add(bestCandidate(["x"], table, { codes, load }, SFS_WEIGHTS, new Prng(seed), new Int32Array(4)))
    }
    expect([...chosen].sort()).toEqual([...codes].sort())
  })

  it('"Assign G to i★": a whole subgraph goes to one worker, and its load counts for the next subgraph', () => {
    const { codes, load, table } = setup(["w1", "w2"])
    const batch = [tx("a", ["x"]), tx("b", ["x", "y"]), tx("c", ["z"]), tx("d", ["y"])]
    const plan = planBlock(1, batch, table, { codes, load }, { roundRobin: 0 }, new Prng(3), {
      policy: "sfs",
      genesisAtWorkers: true,
      recordFinals: false
    })
    expect(plan.subgraphs).toBe(2)
    expect(plan.placement[0]).toBe(plan.placement[1])
    expect(plan.placement[1]).toBe(plan.placement[3])
    // The second subgraph goes to the other worker: the first one made its worker busier.
    expect(plan.placement[2]).not.toBe(plan.placement[0])
  })
})

describe("baseline policies (§6.3)", () => {
  const plan = (policy: "round-robin" | "zeus", batch: ReturnType<typeof tx>[]) => {
    const { codes, load, table } = setup(["w1", "w2", "w3"])
    return planBlock(1, batch, table, { codes, load }, { roundRobin: 0 }, new Prng(9), {
      policy,
      genesisAtWorkers: true,
      recordFinals: false
    }).placement
  }

  it("round-robin places transaction by transaction, ignoring what they share", () => {
    expect([...plan("round-robin", [tx("a", ["x"]), tx("b", ["x"]), tx("c", ["x"]), tx("d", ["x"])])]).toEqual([
      1, 2, 3, 1
    ])
  })

  it('Zeus "aggressively migrates objects to the Worker executing each distributed transaction"', () => {
    const chain = Array.from({ length: 20 }, (_, i) => tx(`t${i}`, [`k${i}`, `k${i + 1}`]))
    // Each transaction shares a key with the last one: locality alone keeps them all on one worker.
    expect(new Set(plan("zeus", chain)).size).toBe(1)
  })

  it('the stateless router "dispatches stateless parts with a focus on load balancing"', () => {
    const { codes, load } = setup(["w1", "w2", "w3"])
    load[codes[0]!] = 5
    const cursor = { next: 0 }
    expect(leastLoaded({ codes, load }, cursor)).toBe(codes[1])
    load[codes[1]!] = 5
    load[codes[2]!] = 5
    // Equal loads rotate.
    const picks = [0, 1, 2].map(() => leastLoaded({ codes, load }, cursor))
    expect(new Set(picks).size).toBe(3)
  })
})
