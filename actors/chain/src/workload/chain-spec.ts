/**
 * The chain's genesis description: how many users, which contracts, how much storage each holds. From it
 * and a seed, `contractsOf` derives every contract (kind, slot seed, regions, code size) deterministically;
 * a primary and a backup built from the same spec have byte-identical genesis state.
 *
 * The shape follows the paper's Ethereum case study (§3, Appendix G): a few hot contracts (a blacklisting
 * stablecoin, a proxied stablecoin, wrapped ether, a lending protocol) take most accesses; tokens have
 * millions of holders, so most keys a block touches are cold and far apart on disk.
 */

import * as Data from "effect/Data"
import { comptrollerDenseSize, MAX_MARKETS, marketDenseSize, oracleDenseSize } from "../runtime/contracts/lending.js"
import { mintDenseSize } from "../runtime/contracts/mint-list.js"
import { TOKEN_FLAG_BLACKLIST, TOKEN_FLAG_PACKED_BLACKLIST, tokenDenseSize } from "../runtime/contracts/tokens.js"
import { CONFIG_SLOTS, ContractKind, type ContractSpec } from "../runtime/layout.js"
import { mix32 } from "../runtime/mix.js"

export interface ChainSpec {
  readonly seed: number
  /** User accounts [0, users). */
  readonly users: number
  /** Tokens after the three hubs (USDT-like, USDC-like, WETH-like): mid-sized, then small ones. */
  readonly midTokens: number
  readonly smallTokens: number
  /** Share of users holding each hub, mid and small token at genesis (dense balance regions). */
  readonly hubHolderShare: ReadonlyArray<number>
  readonly midHolderShare: number
  readonly smallHolderShare: number
  /** Share of a token's holders that approved the router at genesis. */
  readonly allowanceShare: number
  /** Extra pools between random mid tokens (each non-hub token also trades against its hub). */
  readonly extraPools: number
  readonly markets: number
  /** Share of users with a position in each market / a membership in the comptroller. */
  readonly lendingShare: number
  readonly mintLists: number
  readonly mintNodes: number
  readonly mintBuckets: number
  readonly mintWalkMax: number
  readonly codeBytesMin: number
  readonly codeBytesMax: number
  /**
   * Share of genesis keys with a change in block 0 (history index and change set): the pre-history that
   * gives the history index the size an archive's has, so a history seek costs what it costs there.
   */
  readonly preHistoryShare: number
}

export type ChainScale = "test" | "quick" | "full"

const base = {
  hubHolderShare: [0.6, 0.5, 0.4],
  midHolderShare: 0.03,
  smallHolderShare: 0.001,
  allowanceShare: 0.15,
  lendingShare: 0.05,
  mintWalkMax: 12,
  codeBytesMin: 2048,
  codeBytesMax: 24 * 1024,
  preHistoryShare: 0.5
}

/** Presets: `test` is a few MB (unit and integration tests), `quick` ~0.2 GB, `full` several GB. */
export const chainSpec = (scale: ChainScale, seed = 1): ChainSpec => {
  switch (scale) {
    case "test":
      return {
        ...base,
        seed,
        users: 20_000,
        midTokens: 12,
        smallTokens: 40,
        extraPools: 8,
        markets: 4,
        mintLists: 2,
        mintNodes: 2_000,
        mintBuckets: 200,
        codeBytesMax: 4096
      }
    case "quick":
      return {
        ...base,
        seed,
        users: 400_000,
        midTokens: 40,
        smallTokens: 400,
        extraPools: 40,
        markets: 6,
        mintLists: 4,
        mintNodes: 40_000,
        mintBuckets: 4_000
      }
    case "full":
      return {
        ...base,
        seed,
        users: 12_000_000,
        midTokens: 40,
        smallTokens: 400,
        extraPools: 40,
        markets: 6,
        mintLists: 4,
        mintNodes: 1_200_000,
        mintBuckets: 120_000
      }
  }
}

export interface PoolInfo {
  readonly index: number
  readonly token0: number
  readonly token1: number
}

/** Every contract of the chain, and the roles the workload needs to address them. */
export interface ChainContracts {
  readonly spec: ChainSpec
  readonly contracts: ReadonlyArray<ContractSpec>
  readonly registry: number
  readonly router: number
  readonly comptroller: number
  readonly oracle: number
  readonly tokenLogic: number
  /** Token contract indices: hubs first, then mid, then small tokens. */
  readonly tokens: ReadonlyArray<number>
  readonly hubs: ReadonlyArray<number>
  readonly pools: ReadonlyArray<PoolInfo>
  readonly markets: ReadonlyArray<number>
  readonly mintLists: ReadonlyArray<number>
  /** Per token (by contract index): users [0, holders) hold it; [0, allowed) approved the router. */
  readonly holders: ReadonlyMap<number, number>
  readonly allowed: ReadonlyMap<number, number>
  readonly lendingMembers: number
}

const HUBS = 3

export const contractsOf = (spec: ChainSpec): ChainContracts => {
  const contracts: Array<ContractSpec> = []
  const codeBytes = (index: number) =>
    spec.codeBytesMin + (mix32(spec.seed, index, 0xc0de5) % (spec.codeBytesMax - spec.codeBytesMin + 1))
  const add = (kind: ContractKind, dense: number, params: ReadonlyArray<number>): number => {
    const index = contracts.length
    contracts.push({ index, kind, seed: mix32(spec.seed, index, 0x5eed), dense, params, codeBytes: codeBytes(index) })
    return index
  }
  const userAccount = (index: number) => spec.users + index

  const registry = add(ContractKind.Registry, CONFIG_SLOTS, [])
  const router = add(ContractKind.Router, CONFIG_SLOTS, [registry])
  const comptroller = contracts.length
  const lendingMembers = Math.floor(spec.users * spec.lendingShare)
  const markets = Math.min(spec.markets, MAX_MARKETS)
  // The comptroller's first market index is known once tokens and pools are laid out; patched below.
  add(ContractKind.Comptroller, comptrollerDenseSize(lendingMembers), [0, markets, lendingMembers])
  const tokenCount = HUBS + spec.midTokens + spec.smallTokens
  // Prices are indexed by token contract index; tokens follow the oracle and the token logic.
  const oracle = add(ContractKind.Oracle, oracleDenseSize(contracts.length + 2 + tokenCount), [])
  const tokenLogic = add(ContractKind.TokenLogic, 0, [])

  const tokens: Array<number> = []
  const holders = new Map<number, number>()
  const allowed = new Map<number, number>()
  for (let t = 0; t < tokenCount; t++) {
    const share =
      t < HUBS ? spec.hubHolderShare[t]! : t < HUBS + spec.midTokens ? spec.midHolderShare : spec.smallHolderShare
    const h = Math.max(1, Math.floor(spec.users * share))
    const a = Math.max(1, Math.floor(h * spec.allowanceShare))
    // Hub 0 blacklists (USDT), hub 1 is a blacklisting proxy (USDC); every third mid token is proxied.
    const proxied = t === 1 || (t >= HUBS && t < HUBS + spec.midTokens && t % 3 === 0)
    const flags = t === 0 ? TOKEN_FLAG_BLACKLIST : t === 1 ? TOKEN_FLAG_PACKED_BLACKLIST : 0
    const params = [h, a, flags, userAccount(router), tokenLogic]
    const index = add(proxied ? ContractKind.ProxyToken : ContractKind.Token, tokenDenseSize(h, a), params)
    tokens.push(index)
    holders.set(index, h)
    allowed.set(index, a)
  }
  const hubs = tokens.slice(0, HUBS)

  const pools: Array<PoolInfo> = []
  const addPool = (token0: number, token1: number) => {
    const index = add(ContractKind.Pool, CONFIG_SLOTS, [token0, token1, 30, registry])
    pools.push({ index, token0, token1 })
  }
  for (let i = 0; i < HUBS; i++) for (let j = i + 1; j < HUBS; j++) addPool(hubs[i]!, hubs[j]!)
  for (let t = HUBS; t < tokens.length; t++) addPool(tokens[t]!, hubOf(hubs, t))
  for (let i = 0; i < spec.extraPools; i++) {
    const a = HUBS + (mix32(spec.seed, i, 0xe1) % spec.midTokens)
    const b = HUBS + (mix32(spec.seed, i, 0xe2) % spec.midTokens)
    if (a !== b && !pools.some((p) => samePair(p, tokens[a]!, tokens[b]!))) addPool(tokens[a]!, tokens[b]!)
  }

  const marketIndices: Array<number> = []
  for (let m = 0; m < markets; m++) {
    marketIndices.push(
      add(ContractKind.Market, marketDenseSize(lendingMembers), [tokens[m]!, comptroller, oracle, lendingMembers, m])
    )
  }
  const comptrollerSpec = contracts[comptroller]!
  contracts[comptroller] = { ...comptrollerSpec, params: [marketIndices[0] ?? 0, markets, lendingMembers] }

  const mintLists: Array<number> = []
  for (let l = 0; l < spec.mintLists; l++) {
    mintLists.push(
      add(ContractKind.MintList, mintDenseSize(spec.mintBuckets, spec.mintNodes), [
        spec.mintBuckets,
        spec.mintNodes,
        spec.mintWalkMax,
        hubs[2]!
      ])
    )
  }
  return {
    spec,
    contracts,
    registry,
    router,
    comptroller,
    oracle,
    tokenLogic,
    tokens,
    hubs,
    pools,
    markets: marketIndices,
    mintLists,
    holders,
    allowed,
    lendingMembers
  }
}

/** The hub a non-hub token (by position in `tokens`) routes through. */
const hubOf = (hubs: ReadonlyArray<number>, position: number): number => hubs[position % HUBS]!
const samePair = (p: PoolInfo, a: number, b: number) =>
  (p.token0 === a && p.token1 === b) || (p.token0 === b && p.token1 === a)

/** The hub of the token at `position` in `tokens` (a hub is its own). */
export const tokenHub = (chain: ChainContracts, position: number): number =>
  position < HUBS ? chain.tokens[position]! : hubOf(chain.hubs, position)

export const encodeChainSpec = (spec: ChainSpec): Buffer => Buffer.from(JSON.stringify(spec))
/** A published genesis description that is not a ChainSpec (read from the network: checked field by field). */
export class ChainSpecError extends Data.TaggedError("ChainSpecError")<{ readonly detail: string }> {
  override get message() {
    return `invalid chain spec: ${this.detail}`
  }
}

/** Counts a spec may hold: far beyond the `full` preset, short of what would overflow a key's 32-bit fields. */
const MAX_SPEC_COUNT = 2 ** 31 - 1
const COUNT_FIELDS = [
  "seed",
  "users",
  "midTokens",
  "smallTokens",
  "extraPools",
  "markets",
  "mintLists",
  "mintNodes",
  "mintBuckets",
  "mintWalkMax",
  "codeBytesMin",
  "codeBytesMax"
] as const
const SHARE_FIELDS = [
  "midHolderShare",
  "smallHolderShare",
  "allowanceShare",
  "lendingShare",
  "preHistoryShare"
] as const

const isShare = (v: unknown): v is number => typeof v === "number" && v >= 0 && v <= 1

/**
 * The spec in `bytes` (JSON, as encodeChainSpec writes it), every field checked: it comes from a JetStream KV
 * bucket, and a cast of whatever parsed used to let any value through (found by fuzzing).
 */
export const decodeChainSpec = (bytes: Uint8Array): ChainSpec => {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString())
  } catch (cause) {
    throw new ChainSpecError({ detail: `not JSON: ${(cause as Error).message}` })
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ChainSpecError({ detail: "not an object" })
  }
  const o = parsed as Record<string, unknown>
  const expected: ReadonlyArray<string> = [...COUNT_FIELDS, ...SHARE_FIELDS, "hubHolderShare"]
  const unknown = Object.keys(o).find((k) => !expected.includes(k))
  if (unknown !== undefined) throw new ChainSpecError({ detail: `unknown field ${JSON.stringify(unknown)}` })
  for (const field of COUNT_FIELDS) {
    const v = o[field]
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > MAX_SPEC_COUNT) {
      throw new ChainSpecError({ detail: `${field} is ${JSON.stringify(v)}, not a count` })
    }
  }
  for (const field of SHARE_FIELDS) {
    if (!isShare(o[field])) throw new ChainSpecError({ detail: `${field} is ${JSON.stringify(o[field])}, not a share` })
  }
  const hubs = o.hubHolderShare
  if (!Array.isArray(hubs) || hubs.length !== HUBS || !hubs.every(isShare)) {
    throw new ChainSpecError({ detail: `hubHolderShare is not ${HUBS} shares` })
  }
  if ((o.markets as number) > MAX_MARKETS) throw new ChainSpecError({ detail: `more than ${MAX_MARKETS} markets` })
  if ((o.codeBytesMin as number) > (o.codeBytesMax as number)) {
    throw new ChainSpecError({ detail: "codeBytesMin is above codeBytesMax" })
  }
  return o as unknown as ChainSpec
}
