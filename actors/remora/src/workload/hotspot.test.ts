import { TokenTransfer, TpccNewOrder, TpccPayment, type TransactionBody } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { TOKEN_CONTRACT } from "../contracts/token.js"
import { TPCC_NEW_ORDER_CONTRACT } from "../contracts/tpcc.js"
import { Prng } from "../core/prng.js"
import { ethereumLikeSource, hotContractKey, movingTpccSource } from "./hotspot.js"

const costs = { statelessCostUs: 0, statefulCostUs: 0 }

const homeWarehouse = (b: TransactionBody): number =>
  b.call!.contract === TPCC_NEW_ORDER_CONTRACT
    ? TpccNewOrder.decode(b.call!.args).warehouseId
    : TpccPayment.decode(b.call!.args).warehouseId

const draw = (source: { next: (id: string) => TransactionBody }, n: number) =>
  Array.from({ length: n }, (_, i) => source.next(`t${i}`))

describe("moving-hotspot TPC-C", () => {
  const options = {
    ...costs,
    warehouses: 12,
    newOrderShare: 0.5,
    hotWarehouses: 3,
    hotShare: 0.5,
    txsPerPhase: 4000
  }

  it("sends hotShare of each phase's transactions (plus their uniform share) to that phase's hot group", () => {
    const source = movingTpccSource(options, new Prng(7))
    const bodies = draw(source, 5 * options.txsPerPhase)
    for (let phase = 0; phase < 5; phase++) {
      const hot = source.hotIn(phase)
      expect(hot.last - hot.first + 1).toBe(3)
      const inPhase = bodies.slice(phase * options.txsPerPhase, (phase + 1) * options.txsPerPhase)
      const share = inPhase.filter((b) => {
        const w = homeWarehouse(b)
        return w >= hot.first && w <= hot.last
      }).length
      // 0.5 + 0.5 · 3/12 = 0.625 expected; 4000 draws put 3σ at about ±0.023.
      expect(share / inPhase.length).toBeGreaterThan(0.59)
      expect(share / inPhase.length).toBeLessThan(0.66)
      // Every other group gets about 0.5 · 3/12 = 0.125.
      for (let first = 1; first <= 12; first += 3) {
        if (first === hot.first) continue
        const cold = inPhase.filter((b) => homeWarehouse(b) >= first && homeWarehouse(b) < first + 3).length
        expect(cold / inPhase.length).toBeLessThan(0.16)
      }
    }
  })

  it("moves the hot group at every phase boundary, to every group over a run, the same way for the same seed", () => {
    const source = movingTpccSource(options, new Prng(3))
    const firsts = Array.from({ length: 40 }, (_, p) => source.hotIn(p).first)
    for (let p = 1; p < firsts.length; p++) expect(firsts[p]).not.toBe(firsts[p - 1])
    expect(new Set(firsts)).toEqual(new Set([1, 4, 7, 10]))
    expect(source.phaseOf(options.txsPerPhase - 1)).toBe(0)
    expect(source.phaseOf(options.txsPerPhase)).toBe(1)
    const again = movingTpccSource(options, new Prng(3))
    expect(draw(again, 50)).toEqual(draw(movingTpccSource(options, new Prng(3)), 50))
    expect(Array.from({ length: 40 }, (_, p) => again.hotIn(p).first)).toEqual(firsts)
  })

  it("refuses options that describe no hotspot", () => {
    expect(() => movingTpccSource({ ...options, hotWarehouses: 13 }, new Prng(1))).toThrow(/hotWarehouses/)
    expect(() => movingTpccSource({ ...options, hotShare: 1.5 }, new Prng(1))).toThrow(/hotShare/)
    expect(() => movingTpccSource({ ...options, txsPerPhase: 0 }, new Prng(1))).toThrow(/txsPerPhase/)
  })
})

describe("Ethereum-like trace", () => {
  const options = {
    ...costs,
    accounts: 2000,
    zipf: 0.9,
    maxAmount: 100,
    hotContracts: 3,
    hotContractShare: 0.3,
    txsPerPhase: 5000
  }
  const endpoints = (b: TransactionBody) => {
    const t = TokenTransfer.decode(b.call!.args)
    return [t.from, t.to]
  }
  /** Transactions per account (each endpoint counts once). */
  const counts = (bodies: ReadonlyArray<TransactionBody>) => {
    const n = new Map<string, number>()
    for (const b of bodies) for (const a of endpoints(b)) n.set(a, (n.get(a) ?? 0) + 1)
    return n
  }

  it("gives the hot contracts hotContractShare of the transfers, in both directions, phase after phase", () => {
    const source = ethereumLikeSource(options, new Prng(11))
    const bodies = draw(source, 3 * options.txsPerPhase)
    const contracts = new Set([0, 1, 2].map(hotContractKey))
    for (const b of bodies) {
      expect(b.call!.contract).toBe(TOKEN_CONTRACT)
      const [from, to] = endpoints(b)
      expect(from).not.toBe(to)
      expect(b.readSet).toEqual([from, to])
      expect(b.writeSet).toEqual([from, to])
    }
    const withContract = bodies.filter((b) => endpoints(b).some((a) => contracts.has(a)))
    // 0.3 expected; 15,000 draws put 3σ at about ±0.012.
    expect(withContract.length / bodies.length).toBeGreaterThan(0.28)
    expect(withContract.length / bodies.length).toBeLessThan(0.32)
    const paying = withContract.filter((b) => contracts.has(endpoints(b)[0]!)).length
    expect(paying / withContract.length).toBeGreaterThan(0.45)
    expect(paying / withContract.length).toBeLessThan(0.55)
    expect(source.hotIn(0).contracts).toEqual(source.hotIn(2).contracts)
  })

  it("is Zipf-skewed by rank, and the hottest ranks land on other accounts in the next phase", () => {
    const source = ethereumLikeSource({ ...options, hotContractShare: 0 }, new Prng(5))
    const phases = [0, 1, 2].map(() => counts(draw(source, options.txsPerPhase)))
    for (let p = 0; p < 3; p++) {
      const hot = source.hotIn(p)
      const byRank = (r: number) => phases[p]!.get(hot.account(r)) ?? 0
      // Zipf θ = 0.9 over 2000: rank 0 takes about 1/ζ(2000, 0.9) ≈ 8% of draws, rank 1 about half of it; ranks
      // 1000-1009 together far fewer than rank 0.
      const draws = 2 * options.txsPerPhase
      expect(byRank(0) / draws).toBeGreaterThan(0.06)
      expect(byRank(0) / draws).toBeLessThan(0.1)
      expect(byRank(1) / byRank(0)).toBeGreaterThan(0.4)
      expect(byRank(1) / byRank(0)).toBeLessThan(0.65)
      const tail = Array.from({ length: 10 }, (_, i) => byRank(1000 + i)).reduce((a, b) => a + b, 0)
      expect(tail).toBeLessThan(byRank(0) / 4)
    }
    // The head moves: the top 20 accounts of one phase are not the next phase's.
    const top = (c: Map<string, number>) =>
      new Set(
        [...c.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 20)
          .map(([a]) => a)
      )
    for (let p = 1; p < 3; p++) {
      const before = top(phases[p - 1]!)
      const overlap = [...top(phases[p]!)].filter((a) => before.has(a)).length
      expect(overlap).toBeLessThan(5)
      expect(source.hotIn(p).offset).not.toBe(source.hotIn(p - 1).offset)
    }
  })

  it("is the same trace for the same seed, and a different one for another", () => {
    const a = draw(ethereumLikeSource(options, new Prng(9)), 200)
    const b = draw(ethereumLikeSource(options, new Prng(9)), 200)
    const c = draw(ethereumLikeSource(options, new Prng(10)), 200)
    expect(a).toEqual(b)
    expect(a).not.toEqual(c)
  })

  it("refuses a hot share without hot contracts", () => {
    expect(() => ethereumLikeSource({ ...options, hotContracts: 0 }, new Prng(1))).toThrow(/hot contract/)
  })
})
