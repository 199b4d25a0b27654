import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import type { MapState } from "../state/model.js"
import { readHead, StateReader, type StoreTables } from "../state/store.js"
import { StoreState } from "../state/store-state.js"
import { extendChain } from "../workload/build.js"
import { chainSpec, contractsOf } from "../workload/chain-spec.js"
import { defaultWorkload, generateBlock } from "../workload/generator.js"
import { genesisMapState, testStore } from "../workload/testing.js"
import { hubKey } from "./contracts/amm.js"
import { headKey, nextKey, priceKey } from "./contracts/mint-list.js"
import { balanceKey } from "./contracts/tokens.js"
import { ChainContext } from "./execution.js"
import { decodeCode } from "./layout.js"
import { Permutation } from "./mix.js"
import { decodeTxs, encodeTxs, executeBlock, type Tx, TxKind } from "./transactions.js"

const dir = mkdtempSync(join(tmpdir(), "reef-chain-runtime-"))
const stores: Array<StoreTables> = []
afterAll(async () => {
  for (const s of stores) await s.env.close()
  rmSync(dir, { recursive: true, force: true })
})

const spec = chainSpec("test", 3)
const chain = contractsOf(spec)
const context = new ChainContext(spec.seed, spec.users)
const workload = defaultWorkload(11)
const BLOCKS = 24

describe("the contract runtime", () => {
  it("executes the same blocks to the same state hashes on LMDB and on an in-memory model", () => {
    const tables = testStore(join(dir, "live"), spec)
    stores.push(tables)
    const onStore: Array<string> = []
    extendChain(tables, spec, workload, BLOCKS, { onBlock: (o) => onStore.push(o.stateHash.toString("hex")) })
    const model = genesisMapState(spec)
    for (let block = 1; block <= BLOCKS; block++) {
      const outcome = executeBlock(block, generateBlock(chain, workload, block), context, model)
      model.apply(outcome.changes)
      expect(outcome.stateHash.toString("hex"), `block ${block}`).toBe(onStore[block - 1])
    }
    expect(readHead(tables)).toBe(BLOCKS)
  })

  it("replays history on an archive (head past the block) to the hashes of live execution", () => {
    const tables = testStore(join(dir, "archive"), spec)
    stores.push(tables)
    const live: Array<string> = []
    extendChain(tables, spec, workload, BLOCKS, { onBlock: (o) => live.push(o.stateHash.toString("hex")) })
    const reader = new StateReader(tables)
    const sources = [0, 0, 0]
    for (let block = 1; block <= BLOCKS; block++) {
      const pre = new StoreState(reader, block - 1, BLOCKS)
      const outcome = executeBlock(block, generateBlock(chain, workload, block), context, pre)
      expect(outcome.stateHash.toString("hex"), `block ${block}`).toBe(live[block - 1])
      for (let s = 0; s < 3; s++) sources[s]! += pre.counters.bySource[s]!
    }
    // Replaying against a store ahead of the block reads change sets (and only then).
    expect(sources.every((n) => n > 0)).toBe(true)
  })

  it("touches keys that depend on state: the same swap reads other keys once the registry differs", () => {
    const mid = chain.tokens[3]!
    const swap: Tx = { kind: TxKind.Swap, sender: 0, target: chain.router, a: mid, b: chain.hubs[1]!, amount: 10_000 }
    const touched = (state: MapState) => {
      const keys = new Set<string>()
      executeBlock(1, [swap], context, state, { recorder: { storage: (k) => void keys.add(k), code: () => {} } })
      return keys
    }
    const genesis = touched(genesisMapState(spec))
    // Re-point the mid token's routing hub: the router now reads other pair entries and other pools.
    const state = genesisMapState(spec)
    const registry = decodeCode(context.address(chain.registry), state.code(context.address(chain.registry))!)
    state.values.set(hubKey(registry, mid), chain.hubs[2]! + 1)
    const rerouted = touched(state)
    expect(genesis.size).toBeGreaterThan(10)
    expect([...rerouted].filter((k) => !genesis.has(k)).length).toBeGreaterThan(0)
  })

  it("rolls back a reverted transaction's writes but keeps its reads", () => {
    const token = chain.hubs[2]!
    const poor = spec.users - 1 // beyond every token's genesis holders: no balance
    const tx: Tx = { kind: TxKind.Transfer, sender: poor, target: token, a: 5, b: 0, amount: 1000 }
    const keys: Array<string> = []
    const outcome = executeBlock(1, [tx], context, genesisMapState(spec), {
      recorder: { storage: (k) => void keys.push(k), code: () => {} }
    })
    expect(outcome.statuses[0]).toBe(0)
    expect(outcome.changes).toEqual([])
    expect(outcome.counters.reverted).toBe(1)
    expect(keys.length).toBeGreaterThan(0)
  })

  it("moves balances with a transfer and conserves them", () => {
    const token = chain.hubs[2]!
    const state = genesisMapState(spec)
    const info = decodeCode(context.address(token), state.code(context.address(token))!)
    const from = balanceKey(info, 1)
    const to = balanceKey(info, spec.users - 5)
    const before = state.storage(from)
    const outcome = executeBlock(
      1,
      [{ kind: TxKind.Transfer, sender: 1, target: token, a: spec.users - 5, b: 0, amount: 777 }],
      context,
      state
    )
    expect(outcome.statuses[0]).toBe(1)
    state.apply(outcome.changes)
    expect(state.storage(from)).toBe(before - 777)
    expect(state.storage(to)).toBe(777)
  })

  it("keeps a mint list sorted as mints walk it", () => {
    const list = chain.mintLists[0]!
    const state = genesisMapState(spec)
    const prices = [500, 1500, 2500, 1500, 3500]
    for (const [i, price] of prices.entries()) {
      const tx: Tx = { kind: TxKind.Mint, sender: i, target: list, a: 0, b: 0, amount: price }
      const outcome = executeBlock(i + 1, [tx], context, state)
      expect(outcome.statuses[0], `mint ${price}`).toBe(1)
      state.apply(outcome.changes)
    }
    // Walk bucket 0 from its head: prices never decrease, and every mint is in it.
    const info = decodeCode(context.address(list), state.code(context.address(list))!)
    const walked: Array<number> = []
    for (let node = state.storage(headKey(info, 0)); node !== 0; node = state.storage(nextKey(info, node - 1))) {
      walked.push(state.storage(priceKey(info, node - 1)))
    }
    expect(walked).toEqual([...walked].sort((a, b) => a - b))
    for (const price of prices) expect(walked).toContain(price)
  })
})

describe("transactions on the wire", () => {
  it("round-trip and reject malformed bytes with a reason", () => {
    const txs = generateBlock(chain, workload, 5)
    expect(decodeTxs(encodeTxs(txs))).toEqual(txs)
    const bytes = encodeTxs(txs)
    expect(() => decodeTxs(bytes.subarray(0, bytes.length - 1))).toThrow(/bytes for/)
    expect(() => decodeTxs(Buffer.alloc(2))).toThrow(/no count/)
    const badKind = Buffer.from(bytes)
    badKind[4] = 99
    expect(() => decodeTxs(badKind)).toThrow(/kind 99/)
  })
})

describe("the genesis permutation", () => {
  it("is a bijection of [0, n) with its inverse", () => {
    for (const n of [1, 2, 3, 17, 1000, 4097]) {
      const p = new Permutation(n, 42)
      const seen = new Set<number>()
      for (let i = 0; i < n; i++) {
        const y = p.apply(i)
        expect(y).toBeLessThan(n)
        expect(p.invert(y)).toBe(i)
        seen.add(y)
      }
      expect(seen.size).toBe(n)
    }
  })
})
