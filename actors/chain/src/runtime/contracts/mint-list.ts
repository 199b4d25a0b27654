/**
 * A mint whose items are kept in sorted linked lists of storage slots (one list per bucket, like an order
 * book's price levels). Minting walks a bucket's list from its head to the insertion point: each `next`
 * slot read names the next slot to read, so the keys a mint touches are only known by running it.
 */
import type { StorageKey } from "../../state/keys.js"
import { type BlockExecution, Revert } from "../execution.js"
import {
  CONFIG_SLOTS,
  type ContractInfo,
  ContractKind,
  type ContractSpec,
  configKey,
  denseKey,
  hashedKey
} from "../layout.js"
import { transfer } from "./tokens.js"

export const MintParam = { Buckets: 0, Nodes: 1, WalkMax: 2, PayToken: 3 } as const
export const MintSlot = { Paused: 0, NextId: 1, TotalMinted: 2 } as const
/** Prices of consecutive genesis nodes in a bucket differ by this. */
export const PRICE_STEP = 1000

const MAPPING_PRICE = 1
const MAPPING_NEXT = 2
const MAPPING_OWNER = 3
const MAPPING_COUNT = 4

export const mintDenseSize = (buckets: number, nodes: number): number => CONFIG_SLOTS + 2 * nodes + buckets

/**
 * Genesis: node i sits in bucket i mod B at position floor(i / B), priced (position + 1) × PRICE_STEP, and
 * links to node i + B; each bucket's head is its first node. Node ids are stored plus one (0 ends a list).
 */
export const mintGenesisValue = (spec: ContractSpec, logical: number): number => {
  const buckets = spec.params[MintParam.Buckets]!
  const nodes = spec.params[MintParam.Nodes]!
  if (logical < CONFIG_SLOTS) return logical === MintSlot.NextId ? nodes : 0
  const field = logical - CONFIG_SLOTS
  if (field < 2 * nodes) {
    const node = field >>> 1
    if ((field & 1) === 0) return (Math.floor(node / buckets) + 1) * PRICE_STEP
    return node + buckets < nodes ? node + buckets + 1 : 0
  }
  const bucket = field - 2 * nodes
  return bucket < nodes ? bucket + 1 : 0
}

export const priceKey = (m: ContractInfo, node: number): StorageKey =>
  node < m.params[MintParam.Nodes]! ? denseKey(m, CONFIG_SLOTS + 2 * node) : hashedKey(m, MAPPING_PRICE, node)
export const nextKey = (m: ContractInfo, node: number): StorageKey =>
  node < m.params[MintParam.Nodes]! ? denseKey(m, CONFIG_SLOTS + 2 * node + 1) : hashedKey(m, MAPPING_NEXT, node)
export const headKey = (m: ContractInfo, bucket: number): StorageKey =>
  denseKey(m, CONFIG_SLOTS + 2 * m.params[MintParam.Nodes]! + bucket)

/** Mints an item priced `price` into `bucket` for `user`, who pays `price` of the pay token. */
export const mint = (x: BlockExecution, list: number, user: number, bucket: number, price: number): number => {
  const m = x.callKind(list, ContractKind.MintList)
  if (x.sload(configKey(m, MintSlot.Paused)) !== 0) throw new Revert("mint paused")
  const buckets = m.params[MintParam.Buckets]!
  if (bucket >= buckets) throw new Revert("no such bucket")
  const nextIdKey = configKey(m, MintSlot.NextId)
  const id = x.sload(nextIdKey)
  x.sstore(nextIdKey, id + 1)
  let linkKey = headKey(m, bucket)
  let current = x.sload(linkKey)
  const walkMax = m.params[MintParam.WalkMax]!
  for (let steps = 0; current !== 0 && steps < walkMax; steps++) {
    if (x.sload(priceKey(m, current - 1)) > price) break
    linkKey = nextKey(m, current - 1)
    current = x.sload(linkKey)
  }
  x.sstore(priceKey(m, id), price)
  x.sstore(nextKey(m, id), current)
  x.sstore(linkKey, id + 1)
  x.sstore(hashedKey(m, MAPPING_OWNER, id), user + 1)
  const countKey = hashedKey(m, MAPPING_COUNT, user)
  x.sstore(countKey, x.sload(countKey) + 1)
  const totalKey = configKey(m, MintSlot.TotalMinted)
  x.sstore(totalKey, x.sload(totalKey) + 1)
  transfer(x, m.params[MintParam.PayToken]!, user, x.chain.account(list), price)
  return id
}
