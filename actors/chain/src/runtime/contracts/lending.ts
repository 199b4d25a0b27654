/**
 * Lending (Compound style): markets that accrue interest on every call, a comptroller that checks a
 * borrower's liquidity across the markets they entered (read from their membership bitmask, then each
 * market's snapshot and the oracle's price), and an oracle updated by keepers. A borrow reads many keys it
 * only learns from state: which markets, which prices.
 */
import type { StorageKey } from "../../state/keys.js"
import { type BlockExecution, nonReentrant, Revert } from "../execution.js"
import {
  CONFIG_SLOTS,
  type ContractInfo,
  ContractKind,
  type ContractSpec,
  configKey,
  denseKey,
  hashedKey
} from "../layout.js"
import { mix32 } from "../mix.js"
import { balanceOf, transfer } from "./tokens.js"

export const MarketParam = { Underlying: 0, Comptroller: 1, Oracle: 2, Holders: 3, Bit: 4 } as const
export const MarketSlot = {
  BorrowIndex: 0,
  TotalBorrows: 1,
  TotalReserves: 2,
  AccrualBlock: 3,
  TotalSupply: 4,
  ExchangeRate: 5,
  ReserveFactor: 6,
  Cash: 7,
  Status: 8
} as const
export const ComptrollerParam = { FirstMarket: 0, Markets: 1, Members: 2 } as const
export const ComptrollerSlot = { Paused: 0, CloseFactor: 1, CollateralFactor: 2 } as const
/** Most markets a borrower has entered, as bits of their membership word. */
export const MAX_MARKETS = 8

const MAPPING_BORROWS = 1
const MAPPING_TOKENS = 2
const MAPPING_MEMBERSHIP = 3
const ONE = 1e6

export const marketDenseSize = (holders: number): number => CONFIG_SLOTS + 2 * holders
export const comptrollerDenseSize = (members: number): number => CONFIG_SLOTS + members
export const oracleDenseSize = (tokens: number): number => CONFIG_SLOTS + tokens

export const marketGenesisValue = (spec: ContractSpec, logical: number): number => {
  const holders = spec.params[MarketParam.Holders]!
  switch (logical) {
    case MarketSlot.BorrowIndex:
    case MarketSlot.ExchangeRate:
      return ONE
    case MarketSlot.TotalBorrows:
      return 1e13
    case MarketSlot.TotalSupply:
      return 1e14
    case MarketSlot.AccrualBlock:
      return 1
    case MarketSlot.ReserveFactor:
      return 1e5
    case MarketSlot.Status:
      return 1
  }
  if (logical < CONFIG_SLOTS) return 0
  const account = (logical - CONFIG_SLOTS) % holders
  const isBorrow = logical < CONFIG_SLOTS + holders
  const draw = mix32(spec.seed, account, isBorrow ? 0xb0 : 0x70)
  return isBorrow ? (draw % 4 === 0 ? 1e6 + (draw % 1e8) : 0) : 1e8 + (draw % 1e10)
}

export const comptrollerGenesisValue = (spec: ContractSpec, logical: number): number => {
  switch (logical) {
    case ComptrollerSlot.CloseFactor:
      return 5e5
    case ComptrollerSlot.CollateralFactor:
      return 7e5
  }
  if (logical < CONFIG_SLOTS) return 0
  // Each member entered one to four markets.
  const markets = spec.params[ComptrollerParam.Markets]!
  const draw = mix32(spec.seed, logical, 0x3e3)
  let mask = 0
  for (let i = 0; i <= draw % 4; i++) mask |= 1 << ((draw >>> (8 + 3 * i)) % Math.min(markets, MAX_MARKETS))
  return mask
}

export const oracleGenesisValue = (spec: ContractSpec, logical: number): number =>
  logical < CONFIG_SLOTS ? 0 : 1e6 + (mix32(spec.seed, logical, 0x9e1) % 1e9)

const borrowsKey = (m: ContractInfo, user: number): StorageKey =>
  user < m.params[MarketParam.Holders]! ? denseKey(m, CONFIG_SLOTS + user) : hashedKey(m, MAPPING_BORROWS, user)
const tokensKey = (m: ContractInfo, user: number): StorageKey =>
  user < m.params[MarketParam.Holders]!
    ? denseKey(m, CONFIG_SLOTS + m.params[MarketParam.Holders]! + user)
    : hashedKey(m, MAPPING_TOKENS, user)
const membershipKey = (c: ContractInfo, user: number): StorageKey =>
  user < c.params[ComptrollerParam.Members]! ? denseKey(c, CONFIG_SLOTS + user) : hashedKey(c, MAPPING_MEMBERSHIP, user)

export const price = (x: BlockExecution, oracle: number, token: number): number => {
  const o = x.callKind(oracle, ContractKind.Oracle)
  if (CONFIG_SLOTS + token >= o.dense) throw new Revert("no price")
  return x.sload(denseKey(o, CONFIG_SLOTS + token))
}

export const updatePrice = (x: BlockExecution, oracle: number, token: number, value: number): void => {
  const o = x.callKind(oracle, ContractKind.Oracle)
  if (CONFIG_SLOTS + token >= o.dense) throw new Revert("no price")
  x.sstore(denseKey(o, CONFIG_SLOTS + token), value)
}

const accrue = (x: BlockExecution, m: ContractInfo): void => {
  const accrualKey = configKey(m, MarketSlot.AccrualBlock)
  if (x.sload(accrualKey) === x.number) return
  const indexKey = configKey(m, MarketSlot.BorrowIndex)
  const borrowsTotalKey = configKey(m, MarketSlot.TotalBorrows)
  const reservesKey = configKey(m, MarketSlot.TotalReserves)
  const index = x.sload(indexKey)
  const borrows = x.sload(borrowsTotalKey)
  const interest = Math.floor(borrows / 1e6)
  const reserveFactor = x.sload(configKey(m, MarketSlot.ReserveFactor))
  x.sstore(indexKey, index + Math.floor(index / 1e6))
  x.sstore(borrowsTotalKey, borrows + interest)
  x.sstore(reservesKey, x.sload(reservesKey) + Math.floor((interest * reserveFactor) / ONE))
  x.sstore(accrualKey, x.number)
}

/** exchangeRateStored(): (cash + borrows - reserves) / supply, with cash read from the underlying token. */
const exchangeRate = (x: BlockExecution, m: ContractInfo, market: number): number => {
  const supplied = x.sload(configKey(m, MarketSlot.TotalSupply))
  if (supplied === 0) return x.sload(configKey(m, MarketSlot.ExchangeRate))
  const cash = balanceOf(x, m.params[MarketParam.Underlying]!, x.chain.account(market))
  const borrows = x.sload(configKey(m, MarketSlot.TotalBorrows))
  const reserves = x.sload(configKey(m, MarketSlot.TotalReserves))
  return Math.max(1, Math.floor(((cash + borrows - reserves) * ONE) / supplied))
}

/** A market's view of a user: collateral value and debt, in underlying units. */
const snapshot = (x: BlockExecution, market: number, user: number): { collateral: number; debt: number } => {
  const m = x.callKind(market, ContractKind.Market)
  accrue(x, m)
  const tokens = x.sload(tokensKey(m, user))
  const rate = exchangeRate(x, m, market)
  const principal = x.sload(borrowsKey(m, user))
  const index = x.sload(configKey(m, MarketSlot.BorrowIndex))
  return { collateral: (tokens * rate) / ONE, debt: (principal * index) / ONE }
}

/** Checks that `user` stays solvent after borrowing `amount` of `market`'s underlying; reverts otherwise. */
const borrowAllowed = (x: BlockExecution, comptroller: number, market: number, user: number, amount: number): void => {
  const c = x.callKind(comptroller, ContractKind.Comptroller)
  if (x.sload(configKey(c, ComptrollerSlot.Paused)) !== 0) throw new Revert("borrowing paused")
  const factor = x.sload(configKey(c, ComptrollerSlot.CollateralFactor)) / ONE
  const mask = x.sload(membershipKey(c, user))
  if (mask === 0) throw new Revert("no collateral")
  const first = c.params[ComptrollerParam.FirstMarket]!
  let liquidity = 0
  for (let bit = 0; bit < MAX_MARKETS; bit++) {
    if ((mask & (1 << bit)) === 0) continue
    const member = first + bit
    const m = x.callKind(member, ContractKind.Market)
    const { collateral, debt } = snapshot(x, member, user)
    const assetPrice = price(x, m.params[MarketParam.Oracle]!, m.params[MarketParam.Underlying]!)
    liquidity += (collateral * factor - debt) * (assetPrice / ONE)
  }
  const m = x.callKind(market, ContractKind.Market)
  const borrowPrice = price(x, m.params[MarketParam.Oracle]!, m.params[MarketParam.Underlying]!)
  if (liquidity < amount * (borrowPrice / ONE)) throw new Revert("insufficient liquidity")
}

export const borrow = (x: BlockExecution, market: number, user: number, amount: number): void => {
  const m = x.callKind(market, ContractKind.Market)
  nonReentrant(x, configKey(m, MarketSlot.Status), () => {
    accrue(x, m)
    borrowAllowed(x, m.params[MarketParam.Comptroller]!, market, user, amount)
    const key = borrowsKey(m, user)
    x.sstore(key, x.sload(key) + amount)
    const totalKey = configKey(m, MarketSlot.TotalBorrows)
    x.sstore(totalKey, x.sload(totalKey) + amount)
    transfer(x, m.params[MarketParam.Underlying]!, x.chain.account(market), user, amount)
  })
}

export const repay = (x: BlockExecution, market: number, user: number, amount: number): void => {
  const m = x.callKind(market, ContractKind.Market)
  nonReentrant(x, configKey(m, MarketSlot.Status), () => {
    accrue(x, m)
    const key = borrowsKey(m, user)
    const owed = x.sload(key)
    if (owed === 0) throw new Revert("nothing to repay")
    const paid = Math.min(owed, amount)
    transfer(x, m.params[MarketParam.Underlying]!, user, x.chain.account(market), paid)
    x.sstore(key, owed - paid)
    const totalKey = configKey(m, MarketSlot.TotalBorrows)
    x.sstore(totalKey, Math.max(0, x.sload(totalKey) - paid))
  })
}

/** Supplies `amount` of the underlying and enters the market as collateral. */
export const supply = (x: BlockExecution, market: number, user: number, amount: number): void => {
  const m = x.callKind(market, ContractKind.Market)
  nonReentrant(x, configKey(m, MarketSlot.Status), () => {
    accrue(x, m)
    const rate = exchangeRate(x, m, market)
    transfer(x, m.params[MarketParam.Underlying]!, user, x.chain.account(market), amount)
    const minted = Math.floor((amount * ONE) / rate)
    const key = tokensKey(m, user)
    x.sstore(key, x.sload(key) + minted)
    const supplyKey = configKey(m, MarketSlot.TotalSupply)
    x.sstore(supplyKey, x.sload(supplyKey) + minted)
    const c = x.callKind(m.params[MarketParam.Comptroller]!, ContractKind.Comptroller)
    const memberKey = membershipKey(c, user)
    const mask = x.sload(memberKey)
    const bit = 1 << m.params[MarketParam.Bit]!
    if ((mask & bit) === 0) x.sstore(memberKey, mask | bit)
  })
}
