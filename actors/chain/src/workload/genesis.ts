/**
 * The genesis state of a chain spec, written to a store in key order: contracts by address, each
 * contract's slots in slot order. Dense regions are enumerated through the inverse permutation (slot order
 * is permuted-index order, see runtime/layout.ts); the few entries in hashed slots (pool balances, the
 * registry's pairs and hubs) are sorted and merged in.
 */
import {
  genesisReserve,
  hubKey,
  pairKey,
  poolGenesisValue,
  registryGenesisValue,
  routerGenesisValue
} from "../runtime/contracts/amm.js"
import { comptrollerGenesisValue, marketGenesisValue, oracleGenesisValue } from "../runtime/contracts/lending.js"
import { mintGenesisValue } from "../runtime/contracts/mint-list.js"
import { balanceKey, tokenGenesisValue } from "../runtime/contracts/tokens.js"
import { ChainContext } from "../runtime/execution.js"
import {
  type ContractInfo,
  ContractKind,
  type ContractSpec,
  decodeCode,
  denseSlotAt,
  encodeCode
} from "../runtime/layout.js"
import { mix32, Permutation } from "../runtime/mix.js"
import { ADDRESS_BYTES, type Address, KEY_BYTES, type Slot, type StorageKey } from "../state/keys.js"
import {
  appendGenesisSorted,
  type GenesisEntry,
  putCodeSync,
  type StoreTables,
  writeGenesisSync
} from "../state/store.js"
import { type ChainContracts, type ChainSpec, contractsOf, encodeChainSpec, tokenHub } from "./chain-spec.js"

/** A contract's genesis value at dense logical index `logical`. */
const denseValue = (chainSeed: number, spec: ContractSpec, logical: number): number => {
  switch (spec.kind) {
    case ContractKind.Token:
    case ContractKind.ProxyToken:
      return tokenGenesisValue(spec, logical)
    case ContractKind.Pool:
      return poolGenesisValue(chainSeed, spec, logical)
    case ContractKind.Router:
      return routerGenesisValue(logical)
    case ContractKind.Registry:
      return registryGenesisValue(logical)
    case ContractKind.MintList:
      return mintGenesisValue(spec, logical)
    case ContractKind.Market:
      return marketGenesisValue(spec, logical)
    case ContractKind.Comptroller:
      return comptrollerGenesisValue(spec, logical)
    case ContractKind.Oracle:
      return oracleGenesisValue(spec, logical)
    default:
      return 0
  }
}

/** Genesis entries outside dense regions, by contract index: storage key → value. */
const hashedEntries = (chain: ChainContracts): Map<number, Map<StorageKey, number>> => {
  const context = new ChainContext(chain.spec.seed, chain.spec.users)
  const info = (index: number): ContractInfo => decodeCode(context.address(index), encodeCode(chain.contracts[index]!))
  const entries = new Map<number, Map<StorageKey, number>>()
  const set = (contract: number, key: StorageKey, value: number) => {
    let map = entries.get(contract)
    if (map === undefined) {
      map = new Map()
      entries.set(contract, map)
    }
    map.set(key, value)
  }
  const registry = info(chain.registry)
  const tokenInfo = new Map(chain.tokens.map((t) => [t, info(t)]))
  for (const pool of chain.pools) {
    set(chain.registry, pairKey(registry, pool.token0, pool.token1), pool.index + 1)
    set(chain.registry, pairKey(registry, pool.token1, pool.token0), pool.index + 1)
    const account = context.account(pool.index)
    set(pool.token0, balanceKey(tokenInfo.get(pool.token0)!, account), genesisReserve(chain.spec.seed, pool.index, 0))
    set(pool.token1, balanceKey(tokenInfo.get(pool.token1)!, account), genesisReserve(chain.spec.seed, pool.index, 1))
  }
  chain.tokens.forEach((token, position) => {
    set(chain.registry, hubKey(registry, token), tokenHub(chain, position) + 1)
  })
  for (const market of chain.markets) {
    const underlying = chain.contracts[market]!.params[0]!
    set(underlying, balanceKey(tokenInfo.get(underlying)!, context.account(market)), 1e13)
  }
  return entries
}

/** A contract's genesis storage in slot order. */
function* contractStorage(
  chainSeed: number,
  spec: ContractSpec,
  hashed: ReadonlyMap<StorageKey, number> | undefined
): Generator<readonly [Slot, number]> {
  const extra = [...(hashed ?? new Map<StorageKey, number>()).entries()]
    .map(([key, value]) => [key.slice(ADDRESS_BYTES), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1))
  let e = 0
  const permutation = spec.dense > 0 ? new Permutation(spec.dense, spec.seed) : undefined
  for (let v = 0; v < spec.dense; v++) {
    const slot = denseSlotAt(spec.seed, spec.dense, v)
    while (e < extra.length && extra[e]![0] < slot) yield extra[e++]!
    yield [slot, denseValue(chainSeed, spec, permutation!.invert(v))] as const
  }
  while (e < extra.length) yield extra[e++]!
}

export interface GenesisSummary {
  readonly contracts: number
  readonly storageEntries: number
  /** Keys given a pre-history entry (history index and change set of block 0). */
  readonly historyEntries: number
  readonly codeBytes: number
}

/** Every genesis storage entry of `spec` in key order (contracts by address, then slots), zero values skipped. */
export function* genesisStorage(spec: ChainSpec): Generator<readonly [address: Address, slot: Slot, value: number]> {
  const chain = contractsOf(spec)
  const context = new ChainContext(spec.seed, spec.users)
  const hashed = hashedEntries(chain)
  const ordered = [...chain.contracts].sort((a, b) => {
    const x = context.address(a.index)
    const y = context.address(b.index)
    return x < y ? -1 : x > y ? 1 : 0
  })
  for (const contract of ordered) {
    const address = context.address(contract.index)
    for (const [slot, value] of contractStorage(spec.seed, contract, hashed.get(contract.index))) {
      if (value !== 0) yield [address, slot, value] as const
    }
  }
}

/** The code of every contract of `spec`, by address. */
export const genesisCode = (spec: ChainSpec): Map<Address, Buffer> => {
  const context = new ChainContext(spec.seed, spec.users)
  return new Map(contractsOf(spec).contracts.map((c) => [context.address(c.index), encodeCode(c)] as const))
}

/**
 * Writes the genesis of `spec` into an empty store: code, storage (appended in key order) and the spec
 * itself (so a backup can check it has the same chain).
 */
export const writeGenesis = (tables: StoreTables, spec: ChainSpec): GenesisSummary => {
  const code = genesisCode(spec)
  let codeBytes = 0
  tables.env.transactionSync(() => {
    for (const [address, bytes] of code) {
      codeBytes += bytes.length
      putCodeSync(tables, address, bytes)
    }
    writeGenesisSync(tables, encodeChainSpec(spec))
  })
  const key = Buffer.alloc(KEY_BYTES)
  const threshold = Math.floor(spec.preHistoryShare * 2 ** 32)
  function* entries(): Generator<GenesisEntry> {
    for (const [address, slot, value] of genesisStorage(spec)) {
      key.write(address, 0, ADDRESS_BYTES, "latin1")
      key.write(slot, ADDRESS_BYTES, KEY_BYTES - ADDRESS_BYTES, "latin1")
      const draw = mix32(spec.seed, key.readUInt32BE(20), key.readUInt32BE(48), 0x9e)
      // Keys with pre-history held another value before block 0 (any other; it is never read as of then).
      yield [key, value, draw < threshold ? draw % 1_000_000 : undefined] as const
    }
  }
  const written = appendGenesisSorted(tables, entries())
  const storageEntries = written.storage
  const historyEntries = written.history
  return { contracts: code.size, storageEntries, historyEntries, codeBytes }
}
