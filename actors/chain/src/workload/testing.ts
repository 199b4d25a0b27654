/** Helpers for tests of the chain and of its backups: a genesis in memory, a store with a history. */
import { MapState } from "../state/model.js"
import { openTables, type StoreTables } from "../state/store.js"
import { type ChainSpec, chainSpec } from "./chain-spec.js"
import { genesisCode, genesisStorage, writeGenesis } from "./genesis.js"

/** The genesis of `spec` as an in-memory parent state. */
export const genesisMapState = (spec: ChainSpec): MapState => {
  const values = new Map<string, number>()
  for (const [address, slot, value] of genesisStorage(spec)) values.set(address + slot, value)
  return new MapState(values, genesisCode(spec))
}

/** A scratch store (no fsync) at `path` holding the genesis of the test-scale chain. */
export const testStore = (path: string, spec: ChainSpec = chainSpec("test")): StoreTables => {
  const tables = openTables({ path, durable: false, mapSizeBytes: 2 ** 31 })
  writeGenesis(tables, spec)
  return tables
}
