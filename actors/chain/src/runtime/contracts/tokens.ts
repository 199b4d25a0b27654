/**
 * ERC-20 tokens. A `Token` keeps its logic inline (USDT-like, with a blacklist read on every transfer); a
 * `ProxyToken` (USDC-like) reads its implementation slot on every call and loads the logic contract's
 * code before running it on the proxy's storage, as a DELEGATECALL does.
 *
 * Storage: configuration slots, then dense regions for the genesis holders' balances and for their
 * allowances to the router; everyone else's entries are hashed mapping slots.
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
import { mix32 } from "../mix.js"

export const TokenParam = { Holders: 0, Allowed: 1, Flags: 2, Spender: 3, Implementation: 4 } as const
/** Transfers read the sender's blacklist entry (USDT). */
export const TOKEN_FLAG_BLACKLIST = 1
/**
 * Blacklist flags share the balance's slot (USDC v2.2 packs them): the checks re-read the sender's and the
 * recipient's balance slots instead of reading a mapping of their own.
 */
export const TOKEN_FLAG_PACKED_BLACKLIST = 2
export const TokenSlot = {
  TotalSupply: 0,
  Paused: 1,
  Owner: 2,
  Implementation: 3,
  Decimals: 4,
  FeeRate: 5,
  MaxFee: 6,
  Deprecated: 7
} as const
/** The packed blacklist bit (see TOKEN_FLAG_PACKED_BLACKLIST): balances stay below it. */
const BLACKLISTED = 2 ** 52
/** An allowance nobody decrements (the max approval wallets give routers). */
export const UNLIMITED_ALLOWANCE = 2 ** 52

const MAPPING_BALANCE = 1
const MAPPING_ALLOWANCE = 2
const MAPPING_BLACKLIST = 3

export const tokenDenseSize = (holders: number, allowed: number): number => CONFIG_SLOTS + holders + allowed

/** Genesis balance of a dense holder (also used for contract accounts given explicit entries). */
export const genesisBalance = (seed: number, account: number): number => 1e8 + (mix32(seed, account, 0xba1) % 1e10)

/** The value at dense logical index `logical` of a token at genesis. */
export const tokenGenesisValue = (spec: ContractSpec, logical: number): number => {
  const holders = spec.params[TokenParam.Holders]!
  if (logical < CONFIG_SLOTS) {
    switch (logical) {
      case TokenSlot.TotalSupply:
        return 1e15
      case TokenSlot.Owner:
        return 1
      case TokenSlot.Decimals:
        return 6
      case TokenSlot.MaxFee:
        return 1e6
      case TokenSlot.Implementation:
        return spec.kind === ContractKind.ProxyToken ? spec.params[TokenParam.Implementation]! + 1 : 0
      default:
        return 0
    }
  }
  if (logical < CONFIG_SLOTS + holders) return genesisBalance(spec.seed, logical - CONFIG_SLOTS)
  return UNLIMITED_ALLOWANCE
}

export const balanceKey = (t: ContractInfo, account: number): StorageKey =>
  account < t.params[TokenParam.Holders]! ? denseKey(t, CONFIG_SLOTS + account) : hashedKey(t, MAPPING_BALANCE, account)

export const allowanceKey = (t: ContractInfo, owner: number, spender: number): StorageKey =>
  spender === t.params[TokenParam.Spender] && owner < t.params[TokenParam.Allowed]!
    ? denseKey(t, CONFIG_SLOTS + t.params[TokenParam.Holders]! + owner)
    : hashedKey(t, MAPPING_ALLOWANCE, owner, spender)

export const blacklistKey = (t: ContractInfo, account: number): StorageKey => hashedKey(t, MAPPING_BLACKLIST, account)

/** The contract whose storage a token call uses; a proxy first resolves and loads its implementation. */
const tokenStorage = (x: BlockExecution, index: number): ContractInfo => {
  const t = x.callKind(index, ContractKind.Token, ContractKind.ProxyToken)
  if (t.kind === ContractKind.ProxyToken) {
    const implementation = x.sload(configKey(t, TokenSlot.Implementation))
    if (implementation === 0) throw new Revert("proxy without implementation")
    x.callKind(implementation - 1, ContractKind.TokenLogic)
  }
  return t
}

const move = (x: BlockExecution, t: ContractInfo, from: number, to: number, amount: number): void => {
  const flags = t.params[TokenParam.Flags]!
  let fee = 0
  if ((flags & TOKEN_FLAG_BLACKLIST) !== 0) {
    // USDT: `deprecated`, the sender's blacklist entry and the transfer fee's configuration, every transfer.
    if (x.sload(configKey(t, TokenSlot.Deprecated)) !== 0) throw new Revert("token deprecated")
    if (x.sload(blacklistKey(t, from)) !== 0) throw new Revert("blacklisted")
    const rate = x.sload(configKey(t, TokenSlot.FeeRate))
    if (rate !== 0) fee = Math.min(x.sload(configKey(t, TokenSlot.MaxFee)), Math.floor((amount * rate) / 10_000))
  }
  if (x.sload(configKey(t, TokenSlot.Paused)) !== 0) throw new Revert("token paused")
  const fromKey = balanceKey(t, from)
  const toKey = balanceKey(t, to)
  if ((flags & TOKEN_FLAG_PACKED_BLACKLIST) !== 0) {
    // The blacklist bit lives in the balance word's top bit, never set by this chain's keepers.
    if (x.sload(fromKey) >= BLACKLISTED || x.sload(toKey) >= BLACKLISTED) throw new Revert("blacklisted")
  }
  const balance = x.sload(fromKey)
  if (balance < amount) throw new Revert("insufficient balance")
  x.sstore(fromKey, balance - amount)
  x.sstore(toKey, x.sload(toKey) + amount - fee)
}

export const transfer = (x: BlockExecution, token: number, from: number, to: number, amount: number): void =>
  move(x, tokenStorage(x, token), from, to, amount)

export const transferFrom = (
  x: BlockExecution,
  token: number,
  spender: number,
  from: number,
  to: number,
  amount: number
): void => {
  const t = tokenStorage(x, token)
  const key = allowanceKey(t, from, spender)
  const allowed = x.sload(key)
  if (allowed < amount) throw new Revert("allowance exceeded")
  if (allowed !== UNLIMITED_ALLOWANCE) x.sstore(key, allowed - amount)
  move(x, t, from, to, amount)
}

export const approve = (x: BlockExecution, token: number, owner: number, spender: number, amount: number): void => {
  const t = tokenStorage(x, token)
  if (x.sload(configKey(t, TokenSlot.Paused)) !== 0) throw new Revert("token paused")
  x.sstore(allowanceKey(t, owner, spender), amount)
}

export const balanceOf = (x: BlockExecution, token: number, account: number): number =>
  x.sload(balanceKey(tokenStorage(x, token), account))
