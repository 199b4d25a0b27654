import { describe, expect, it } from "vitest"
import { tx } from "../test/core-fixtures.js"
import { KeyIndex, ObjectTable, pack, WorkerRegistry } from "./object-table.js"
import { bestCandidate, type KeySpan, leastLoaded, mostInputs, SFS_WEIGHTS } from "./placement.js"
import { PlannerScratch, planBlock } from "./planner.js"
import { Prng } from "./prng.js"
import { keyedBlock } from "./subgraphs.js"
import type { TxMeta } from "./types.js"

const setup = (workers: ReadonlyArray<string>) => {
  const registry = new WorkerRegistry()
  const codes = workers.map((w) => registry.codeOf(w))
  const keys = new KeyIndex()
  const span = (names: ReadonlyArray<string>): KeySpan => {
    const ids = Int32Array.from(names, (n) => keys.intern(n))
    return { ids, from: 0, to: ids.length }
  }
  return { registry, codes, load: new Float64Array(registry.maxCode + 1), table: new ObjectTable(), keys, span }
}

const plan = (
  s: ReturnType<typeof setup>,
  batch: ReadonlyArray<TxMeta<string>>,
  policy: "sfs" | "round-robin" | "zeus" | "locality",
  seed: number
) =>
  planBlock(
    1,
    batch,
    keyedBlock(batch, s.keys),
    s.keys.size,
    s.table,
    { codes: s.codes, load: s.load },
    { roundRobin: 0 },
    new Prng(seed),
    { policy, genesisAtWorkers: true },
    new PlannerScratch()
  )

describe("SFS placement (Alg. 1)", () => {
  it('"R_i ← |K ∩ O_i|/|K|; L_i ← 1 − P_i/max_j P_j; S_i ← 0.5 R_i + 0.5 L_i": locality and spare load in equal parts', () => {
    const { codes, load, table, span, keys } = setup(["w1", "w2", "w3"])
    const [w1, w2, w3] = codes as [number, number, number]
    const footprint = span(["a", "b", "c", "d"])
    // w1 owns 3 of the 4 keys but is the busiest; w2 owns 1 and is idle; w3 owns none and is half busy.
    table.set(keys.find("a"), pack(1, w1))
    table.set(keys.find("b"), pack(1, w1))
    table.set(keys.find("c"), pack(1, w1))
    table.set(keys.find("d"), pack(1, w2))
    load[w1] = 100
    load[w2] = 0
    load[w3] = 50
    const counts = new Int32Array(load.length)
    // S1 = 0.5·0.75 + 0.5·0 = 0.375; S2 = 0.5·0.25 + 0.5·1 = 0.625; S3 = 0 + 0.5·0.5 = 0.25.
    expect(bestCandidate(footprint, table, { codes, load }, SFS_WEIGHTS, new Prng(1), counts)).toBe(w2)
    load[w2] = 90
    // S1 = 0.375; S2 = 0.125 + 0.05 = 0.175; S3 = 0.25.
    expect(bestCandidate(footprint, table, { codes, load }, SFS_WEIGHTS, new Prng(1), counts)).toBe(w1)
    expect([...counts]).toEqual(new Array(counts.length).fill(0))
  })

  it('"i★ ← arg max_i S_i (break ties randomly)": every tied worker gets chosen for some seed', () => {
    const { codes, load, table, span } = setup(["w1", "w2", "w3"])
    const chosen = new Set<number>()
    const x = span(["x"])
    for (let seed = 1; seed < 60; seed++) {
      chosen.add(bestCandidate(x, table, { codes, load }, SFS_WEIGHTS, new Prng(seed), new Int32Array(4)))
    }
    expect([...chosen].sort()).toEqual([...codes].sort())
  })

  it('"Assign G to i★": a whole subgraph goes to one worker, and its load counts for the next subgraph', () => {
    const batch = [tx("a", ["x"]), tx("b", ["x", "y"]), tx("c", ["z"]), tx("d", ["y"])]
    const p = plan(setup(["w1", "w2"]), batch, "sfs", 3)
    expect(p.subgraphs).toBe(2)
    expect(p.placement[0]).toBe(p.placement[1])
    expect(p.placement[1]).toBe(p.placement[3])
    // The second subgraph goes to the other worker: the first one made its worker busier.
    expect(p.placement[2]).not.toBe(p.placement[0])
  })
})

describe("baseline policies (§6.3)", () => {
  const placed = (policy: "round-robin" | "zeus" | "locality", batch: ReturnType<typeof tx>[]) =>
    plan(setup(["w1", "w2", "w3"]), batch, policy, 9).placement

  it("round-robin places transaction by transaction, ignoring what they share", () => {
    expect([...placed("round-robin", [tx("a", ["x"]), tx("b", ["x"]), tx("c", ["x"]), tx("d", ["x"])])]).toEqual([
      1, 2, 3, 1
    ])
  })

  it('Zeus "aggressively migrates objects to the Worker executing each distributed transaction"', () => {
    const chain = Array.from({ length: 20 }, (_, i) => tx(`t${i}`, [`k${i}`, `k${i + 1}`]))
    // Each transaction shares a key with the last one: locality alone keeps them all on one worker.
    expect(new Set(placed("zeus", chain)).size).toBe(1)
  })

  it("locality-only goes to the worker holding most of the inputs, however busy it is", () => {
    const { codes, load, table, span, keys } = setup(["w1", "w2", "w3"])
    const [w1, w2, w3] = codes as [number, number, number]
    const inputs = span(["a", "b", "c"])
    table.set(keys.find("a"), pack(1, w2))
    table.set(keys.find("b"), pack(4, w2))
    table.set(keys.find("c"), pack(1, w3))
    load[w1] = 0
    load[w2] = 1_000_000
    load[w3] = 10
    const counts = new Int32Array(load.length)
    expect(mostInputs(inputs, table, { codes, load }, counts)).toBe(w2)
    // SFS on the same inputs weighs the load in and leaves the busy holder.
    expect(bestCandidate(inputs, table, { codes, load }, SFS_WEIGHTS, new Prng(1), counts)).not.toBe(w2)
    expect([...counts]).toEqual(new Array(counts.length).fill(0))
  })

  it("locality-only breaks ties by the lowest load, then by worker order, never by chance", () => {
    const { codes, load, table, span, keys } = setup(["w1", "w2", "w3"])
    const [w1, w2, w3] = codes as [number, number, number]
    const counts = new Int32Array(load.length)
    // Nobody holds "x": all tie at zero owned inputs.
    load[w1] = 30
    load[w2] = 20
    load[w3] = 25
    expect(mostInputs(span(["x"]), table, { codes, load }, counts)).toBe(w2)
    load[w2] = 30
    load[w3] = 30
    expect(mostInputs(span(["x"]), table, { codes, load }, counts)).toBe(w1)
    // One input each on w1 and w3: the less loaded of those two, even though w2 is idle.
    table.set(keys.find("x"), pack(1, w1))
    table.set(keys.intern("y"), pack(1, w3))
    load[w1] = 50
    load[w2] = 0
    load[w3] = 40
    expect(mostInputs(span(["x", "y"]), table, { codes, load }, counts)).toBe(w3)
  })

  it("locality-only spreads fresh keys by load and keeps a chain on the worker that holds it", () => {
    // Fresh, disjoint transactions: each goes to the least loaded worker, the planner counting what it placed.
    const fresh = [tx("a", ["p"]), tx("b", ["q"]), tx("c", ["r"]), tx("d", ["s"])]
    expect([...placed("locality", fresh)]).toEqual([1, 2, 3, 1])
    // A chain: each transaction shares a key with the last, so all stay on one worker, the load ignored.
    const chain = Array.from({ length: 20 }, (_, i) => tx(`t${i}`, [`k${i}`, `k${i + 1}`]))
    expect(new Set(placed("locality", chain)).size).toBe(1)
    // Deterministic: the seed does not matter.
    const s1 = plan(setup(["w1", "w2", "w3"]), fresh, "locality", 1).placement
    const s2 = plan(setup(["w1", "w2", "w3"]), fresh, "locality", 77).placement
    expect([...s1]).toEqual([...s2])
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
