/**
 * A constant-product AMM: pools (Uniswap V2 pairs), the registry that knows which pool trades which pair
 * and each token's routing hub, and the router. Which pools a swap touches is read from the registry
 * while the swap runs: a backup cannot know them without executing.
 */
import type { StorageKey } from "../../state/keys.js"
import { type BlockExecution, nonReentrant, Revert } from "../execution.js"
import { type ContractInfo, ContractKind, type ContractSpec, configKey, hashedKey } from "../layout.js"
import { mix32 } from "../mix.js"
import { balanceOf, transfer, transferFrom } from "./tokens.js"

export const PoolParam = { Token0: 0, Token1: 1, FeeBps: 2, Registry: 3 } as const
export const PoolSlot = {
  Reserve0: 0,
  Reserve1: 1,
  TimestampLast: 2,
  Price0Cumulative: 3,
  Price1Cumulative: 4,
  KLast: 5,
  Unlocked: 6,
  Token0: 7,
  Token1: 8
} as const
export const RouterParam = { Registry: 0 } as const
export const RouterSlot = { Paused: 0, FeeTo: 1, Status: 2 } as const
export const RegistrySlot = { FeeTo: 0, FeeToSetter: 1 } as const

const MAPPING_PAIR = 1
const MAPPING_HUB = 2

/** A pool's genesis reserve of one side; its token balance in that token's storage is the same. */
export const genesisReserve = (chainSeed: number, pool: number, side: 0 | 1): number =>
  1e12 + (mix32(chainSeed, pool, side, 0x5e5) % 1e12)

export const poolGenesisValue = (chainSeed: number, spec: ContractSpec, logical: number): number => {
  switch (logical) {
    case PoolSlot.Reserve0:
      return genesisReserve(chainSeed, spec.index, 0)
    case PoolSlot.Reserve1:
      return genesisReserve(chainSeed, spec.index, 1)
    case PoolSlot.TimestampLast:
      return 1
    case PoolSlot.Unlocked:
      return 1
    case PoolSlot.Token0:
      return spec.params[PoolParam.Token0]! + 1
    case PoolSlot.Token1:
      return spec.params[PoolParam.Token1]! + 1
    default:
      return 0
  }
}

export const routerGenesisValue = (logical: number): number =>
  logical === RouterSlot.FeeTo || logical === RouterSlot.Status ? 1 : 0
export const registryGenesisValue = (logical: number): number => (logical === RegistrySlot.FeeToSetter ? 1 : 0)

/** getReserves(): the view call a router makes on each pool of its route before swapping. */
export const getReserves = (x: BlockExecution, pool: number): readonly [number, number] => {
  const p = x.callKind(pool, ContractKind.Pool)
  return [x.sload(configKey(p, PoolSlot.Reserve0)), x.sload(configKey(p, PoolSlot.Reserve1))] as const
}

export const pairKey = (registry: ContractInfo, a: number, b: number): StorageKey =>
  hashedKey(registry, MAPPING_PAIR, a, b)
export const hubKey = (registry: ContractInfo, token: number): StorageKey => hashedKey(registry, MAPPING_HUB, token)

const amountOut = (amountIn: number, reserveIn: number, reserveOut: number, feeBps: number): number => {
  const inWithFee = amountIn * (10_000 - feeBps)
  return Math.floor((inWithFee * reserveOut) / (reserveIn * 10_000 + inWithFee))
}

/** Swaps `amountIn` of `tokenIn` already sent to the pool; pays the output to `to`. */
export const swap = (x: BlockExecution, pool: number, tokenIn: number, amountIn: number, to: number): number => {
  const p = x.callKind(pool, ContractKind.Pool)
  const unlocked = configKey(p, PoolSlot.Unlocked)
  if (x.sload(unlocked) !== 1) throw new Revert("pool locked")
  x.sstore(unlocked, 0)
  // token0 and token1 are storage variables of a V2 pair, read on every swap.
  const token0 = x.sload(configKey(p, PoolSlot.Token0)) - 1
  const token1 = x.sload(configKey(p, PoolSlot.Token1)) - 1
  if (tokenIn !== token0 && tokenIn !== token1) throw new Revert("token not in pool")
  const reserve0Key = configKey(p, PoolSlot.Reserve0)
  const reserve1Key = configKey(p, PoolSlot.Reserve1)
  const reserve0 = x.sload(reserve0Key)
  const reserve1 = x.sload(reserve1Key)
  const zeroForOne = tokenIn === token0
  const out = amountOut(
    amountIn,
    zeroForOne ? reserve0 : reserve1,
    zeroForOne ? reserve1 : reserve0,
    p.params[PoolParam.FeeBps]!
  )
  if (out <= 0 || out >= (zeroForOne ? reserve1 : reserve0)) throw new Revert("insufficient liquidity")
  const self = x.chain.account(pool)
  transfer(x, zeroForOne ? token1 : token0, self, to, out)
  // _mintFee: the factory's fee recipient decides whether kLast is tracked.
  const registry = x.callKind(p.params[PoolParam.Registry]!, ContractKind.Registry)
  if (x.sload(configKey(registry, RegistrySlot.FeeTo)) !== 0) x.sload(configKey(p, PoolSlot.KLast))
  // _update: reserves follow the pool's balances (which the router's transfer in already moved).
  const balance0 = balanceOf(x, token0, self)
  const balance1 = balanceOf(x, token1, self)
  const timestampKey = configKey(p, PoolSlot.TimestampLast)
  if (x.sload(timestampKey) !== x.number) {
    for (const slot of [PoolSlot.Price0Cumulative, PoolSlot.Price1Cumulative]) {
      const key = configKey(p, slot)
      x.sstore(key, (x.sload(key) + 1) % 2 ** 40)
    }
    x.sstore(timestampKey, x.number)
  }
  x.sstore(reserve0Key, balance0)
  x.sstore(reserve1Key, balance1)
  x.sstore(unlocked, 1)
  return out
}

/** One hop of a route: the pool and the token sent into it. */
export interface Hop {
  readonly pool: number
  readonly tokenIn: number
}

/**
 * The route from `tokenIn` to `tokenOut`: the direct pool if the registry has one, otherwise through the
 * tokens' hubs (in → hub(in) → hub(out) → out, skipping legs where the two are the same).
 */
export const route = (x: BlockExecution, registry: number, tokenIn: number, tokenOut: number): Array<Hop> => {
  const r = x.callKind(registry, ContractKind.Registry)
  const direct = x.sload(pairKey(r, tokenIn, tokenOut))
  if (direct !== 0) return [{ pool: direct - 1, tokenIn }]
  const hubIn = x.sload(hubKey(r, tokenIn))
  const hubOut = x.sload(hubKey(r, tokenOut))
  if (hubIn === 0 || hubOut === 0) throw new Revert("no route")
  const path = [tokenIn, hubIn - 1, hubOut - 1, tokenOut].filter((t, i, all) => i === 0 || t !== all[i - 1])
  const hops: Array<Hop> = []
  for (let i = 0; i + 1 < path.length; i++) {
    const pool = x.sload(pairKey(r, path[i]!, path[i + 1]!))
    if (pool === 0) throw new Revert("no route")
    hops.push({ pool: pool - 1, tokenIn: path[i]! })
  }
  return hops
}

/** The router's swap: route, pull the input from the user into the first pool, swap hop by hop. */
export const swapExact = (
  x: BlockExecution,
  router: number,
  user: number,
  tokenIn: number,
  tokenOut: number,
  amountIn: number
): number => {
  const r = x.callKind(router, ContractKind.Router)
  if (x.sload(configKey(r, RouterSlot.Paused)) !== 0) throw new Revert("router paused")
  if (tokenIn === tokenOut) throw new Revert("same token")
  return nonReentrant(x, configKey(r, RouterSlot.Status), () => {
    const hops = route(x, r.params[RouterParam.Registry]!, tokenIn, tokenOut)
    for (const hop of hops) getReserves(x, hop.pool)
    if (balanceOf(x, tokenIn, user) < amountIn) throw new Revert("insufficient input balance")
    transferFrom(x, tokenIn, x.chain.account(router), user, x.chain.account(hops[0]!.pool), amountIn)
    // The output is checked as the balance difference (fee-on-transfer tokens pay out less than quoted).
    const before = balanceOf(x, tokenOut, user)
    let amount = amountIn
    for (let i = 0; i < hops.length; i++) {
      const to = i + 1 < hops.length ? x.chain.account(hops[i + 1]!.pool) : user
      amount = swap(x, hops[i]!.pool, hops[i]!.tokenIn, amount, to)
    }
    if (balanceOf(x, tokenOut, user) - before < amount) throw new Revert("insufficient output")
    return amount
  })
}
