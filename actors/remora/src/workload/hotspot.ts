/**
 * Workloads whose hot objects move (the paper's Fig. 10, §6.8): the trace is cut into phases of `txsPerPhase`
 * transactions, and the hot set changes from one phase to the next. At a fixed offered rate a phase is a fixed
 * stretch of time (the paper: "the workload changes every 20 s"). Deterministic from the PRNG: the same seed
 * gives the same trace, phase boundaries included.
 *
 * - `movingTpccSource`: TPC-C NewOrder + Payment where `hotShare` of the transactions (the paper: 50%) have
 *   their home warehouse in the phase's hot group, a block of `hotWarehouses` consecutive warehouses (the paper
 *   targets "the warehouses pre-assigned on the same Worker"; Reef has no pre-partitioning, so a group is the
 *   unit a worker comes to own); the rest are uniform over every warehouse. Each phase's hot group differs from
 *   the last one.
 * - `ethereumLikeSource`: token transfers (the chain workload's `token.transfer` contract) with the popularity
 *   model below.
 */

import { TOKEN_PREFIX, tokenKey } from "../contracts/token.js"
import type { Prng } from "../core/prng.js"
import { type BodySource, type TokenOptions, type TpccOptions, tokenSource, tpccSource } from "./generators.js"
import { ZipfGenerator } from "./zipf.js"

export interface Phased {
  /** Transactions per phase: the hot set changes every this many. */
  readonly txsPerPhase: number
}

/** A body source that also says which phase a draw belongs to and what is hot in it. */
export interface PhasedSource<Hot> extends BodySource {
  /** The phase of the n-th draw (0-based n). */
  readonly phaseOf: (n: number) => number
  /** What is hot in `phase` (deterministic; phases before the current draw included). */
  readonly hotIn: (phase: number) => Hot
}

const checkPhased = (what: string, options: Phased) => {
  if (!Number.isInteger(options.txsPerPhase) || options.txsPerPhase < 1) {
    throw new Error(`${what}: txsPerPhase must be a positive integer, got ${options.txsPerPhase}`)
  }
}

const checkShare = (what: string, name: string, share: number) => {
  if (!(share >= 0 && share <= 1)) throw new Error(`${what}: ${name} must be in [0, 1], got ${share}`)
}

/**
 * Per phase, one of `choices` values drawn from `prng` that differs from the previous phase's (so the hot set
 * moves at every boundary), memoised so any phase can be asked for at any time.
 */
const movingChoice = (choices: number, prng: Prng) => {
  const chosen: Array<number> = []
  return (phase: number): number => {
    while (chosen.length <= phase) {
      const last = chosen.at(-1)
      if (last === undefined || choices === 1) chosen.push(prng.below(choices))
      else chosen.push((last + 1 + prng.below(choices - 1)) % choices)
    }
    return chosen[phase]!
  }
}

export interface MovingTpccOptions extends TpccOptions, Phased {
  /** Warehouses in a hot group (the warehouses are cut into groups of this many, the last one maybe smaller). */
  readonly hotWarehouses: number
  /** Share of transactions whose home warehouse is in the phase's hot group (the paper: 0.5). */
  readonly hotShare: number
}

/** The hot group of a phase: its warehouses, 1-based and inclusive. */
export interface HotWarehouses {
  readonly first: number
  readonly last: number
}

export const movingTpccSource = (options: MovingTpccOptions, prng: Prng): PhasedSource<HotWarehouses> => {
  checkPhased("moving TPC-C", options)
  checkShare("moving TPC-C", "hotShare", options.hotShare)
  if (!Number.isInteger(options.hotWarehouses) || options.hotWarehouses < 1) {
    throw new Error(`moving TPC-C: hotWarehouses must be a positive integer, got ${options.hotWarehouses}`)
  }
  if (options.hotWarehouses > options.warehouses) {
    throw new Error(`moving TPC-C: hotWarehouses (${options.hotWarehouses}) > warehouses (${options.warehouses})`)
  }
  const groups = Math.ceil(options.warehouses / options.hotWarehouses)
  const groupOf = movingChoice(groups, prng.fork())
  const hotIn = (phase: number): HotWarehouses => {
    const first = 1 + groupOf(phase) * options.hotWarehouses
    return { first, last: Math.min(options.warehouses, first + options.hotWarehouses - 1) }
  }
  const phaseOf = (n: number) => Math.floor(n / options.txsPerPhase)
  let drawn = 0
  const home = () => {
    const hot = hotIn(phaseOf(drawn++))
    return prng.chance(options.hotShare)
      ? hot.first + prng.below(hot.last - hot.first + 1)
      : 1 + prng.below(options.warehouses)
  }
  const source = tpccSource(options, prng, home)
  return { next: source.next, phaseOf, hotIn }
}

/**
 * An Ethereum-like trace of token transfers. Why this shape: mainnet access is heavily skewed, and in two ways
 * (the paper's refs [10, 67]; Heimbach et al., "DeFi and NFTs hinder blockchain scalability", FC 2023, its
 * ref [40]): a few contracts (stablecoins, wrapped ether, DEX routers) appear in a large, steady share of all
 * transactions, while the rest of the popularity follows a heavy tail whose head moves over time (a token or
 * NFT mint trends for a while, then another). The paper replays blocks from different periods for the latter
 * (§6.8). The model:
 *
 * - `hotContracts` accounts (`tok/hot-0`, ...) are the steady heavy hitters: with probability
 *   `hotContractShare` a transfer has one of them (uniformly) on one side, paying out or receiving in equal
 *   measure, and a Zipf-drawn account on the other;
 * - every other endpoint is an account drawn Zipf(`zipf`) by rank over `accounts` accounts, and the ranks map to
 *   accounts through a rotation that moves each phase: in phase p rank r is account (r + offset_p) mod accounts,
 *   with offset_p drawn anew (a different one) each phase, so the head of the distribution lands on other
 *   accounts (and so on other workers' objects) at every boundary.
 */
export interface EthereumLikeOptions extends TokenOptions, Phased {
  readonly hotContracts: number
  readonly hotContractShare: number
}

/** What is hot in a phase: the steady contract accounts, and the offset of the rank → account rotation. */
export interface HotAccounts {
  readonly contracts: ReadonlyArray<string>
  /** Account index of rank 0 (the hottest Zipf rank) in this phase. */
  readonly offset: number
  /** The account (key) of Zipf rank `rank` in this phase. */
  readonly account: (rank: number) => string
}

export const hotContractKey = (i: number): string => `${TOKEN_PREFIX}hot-${i}`

export const ethereumLikeSource = (options: EthereumLikeOptions, prng: Prng): PhasedSource<HotAccounts> => {
  checkPhased("Ethereum-like trace", options)
  checkShare("Ethereum-like trace", "hotContractShare", options.hotContractShare)
  if (!Number.isInteger(options.hotContracts) || options.hotContracts < 0) {
    throw new Error(`Ethereum-like trace: hotContracts must be a non-negative integer, got ${options.hotContracts}`)
  }
  if (options.hotContracts === 0 && options.hotContractShare > 0) {
    throw new Error("Ethereum-like trace: a hotContractShare needs at least one hot contract")
  }
  if (options.accounts < 2) throw new Error(`Ethereum-like trace: needs 2 accounts or more, got ${options.accounts}`)
  const contracts = Array.from({ length: options.hotContracts }, (_, i) => hotContractKey(i))
  const offsetOf = movingChoice(options.accounts, prng.fork())
  const hotIn = (phase: number): HotAccounts => {
    const offset = offsetOf(phase)
    return { contracts, offset, account: (rank) => tokenKey((rank + offset) % options.accounts) }
  }
  const phaseOf = (n: number) => Math.floor(n / options.txsPerPhase)
  const zipf = new ZipfGenerator(options.accounts, options.zipf, prng)
  // The endpoints of each transfer, drawn here; tokenSource's body (amount, encoding) is reused through `pair`.
  let drawn = 0
  const pair = (): [string, string] => {
    const hot = hotIn(phaseOf(drawn++))
    if (contracts.length > 0 && prng.chance(options.hotContractShare)) {
      const contract = contracts[prng.below(contracts.length)]!
      const other = hot.account(zipf.next())
      return prng.chance(0.5) ? [contract, other] : [other, contract]
    }
    const [a, b] = zipf.distinct(2) as [number, number]
    return [hot.account(a), hot.account(b)]
  }
  const source = tokenSource(options, prng, pair)
  return { next: source.next, phaseOf, hotIn }
}
