/**
 * The simulator's primary: the real contract runtime executing a seeded workload on an in-memory genesis,
 * with the hint recorder attached, once per process. Every simulated run replays a window of this chain;
 * what differs between seeds is the stream, the hints, the crashes and the follower's parameters.
 *
 * A state digest after every block (an XOR of a hash per non-zero key and value, so applying a change is
 * O(1)) is what a backup's store is compared against.
 */
import {
  type Address,
  ChainContext,
  chainSpec,
  contractsOf,
  defaultWorkload,
  executeAsPrimary,
  generateBlock,
  genesisMapState,
  type Hint,
  type StorageChange,
  type StorageKey,
  type Tx
} from "@reef/chain"

export interface PrimaryBlock {
  readonly number: number
  readonly txs: ReadonlyArray<Tx>
  readonly stateHash: Uint8Array
  readonly changes: ReadonlyArray<StorageChange>
  readonly hint: Hint
  /** The hint as published (zstd frame). */
  readonly frame: Uint8Array
}

/** Two independent 32-bit hashes, XORed over the state's entries. */
export type Digest = readonly [number, number]

export interface PrimaryChain {
  readonly context: ChainContext
  readonly genesis: ReadonlyMap<StorageKey, number>
  readonly codes: ReadonlyMap<Address, Uint8Array>
  /** Block n at index n - 1. */
  readonly blocks: ReadonlyArray<PrimaryBlock>
  /** The state digest after block n at index n (genesis at 0). */
  readonly digests: ReadonlyArray<Digest>
}

const entryHash = (key: StorageKey, value: number, seed: number): number => {
  let h = 0x811c9dc5 ^ seed
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  h = Math.imul(h ^ (value >>> 0), 0x01000193)
  h = Math.imul(h ^ Math.floor(value / 2 ** 32), 0x01000193)
  return (h ^ (h >>> 15)) >>> 0
}

/** The digest with `key` moved from `before` to `after` (zero values are absent). */
export const updateDigest = (digest: Digest, key: StorageKey, before: number, after: number): Digest => {
  let [a, b] = digest
  if (before !== 0) {
    a ^= entryHash(key, before, 1)
    b ^= entryHash(key, before, 2)
  }
  if (after !== 0) {
    a ^= entryHash(key, after, 1)
    b ^= entryHash(key, after, 2)
  }
  return [a >>> 0, b >>> 0]
}

export const sameDigest = (x: Digest, y: Digest): boolean => x[0] === y[0] && x[1] === y[1]

/** Blocks the primary's chain has: enough for the longest run a seed draws. */
export const CHAIN_BLOCKS = 96
// Small blocks: a few hundred seeds stay quick, and blocks still touch keys only execution reveals.
const TXS_MEDIAN = 4

let cached: PrimaryChain | undefined

export const primaryChain = (): PrimaryChain => {
  if (cached !== undefined) return cached
  const spec = chainSpec("test", 3)
  const chain = contractsOf(spec)
  const context = new ChainContext(spec.seed, spec.users)
  const workload = { ...defaultWorkload(17), txsMedian: TXS_MEDIAN }
  const state = genesisMapState(spec)
  const genesis = new Map(state.values)
  let digest: Digest = [0, 0]
  for (const [key, value] of genesis) digest = updateDigest(digest, key, 0, value)
  const digests: Array<Digest> = [digest]
  const blocks: Array<PrimaryBlock> = []
  for (let number = 1; number <= CHAIN_BLOCKS; number++) {
    const txs = generateBlock(chain, workload, number)
    const block = executeAsPrimary(number, txs, context, state)
    for (const { key, before, after } of block.outcome.changes) digest = updateDigest(digest, key, before, after)
    state.apply(block.outcome.changes)
    digests.push(digest)
    blocks.push({
      number,
      txs,
      stateHash: block.outcome.stateHash,
      changes: block.outcome.changes,
      hint: block.hint,
      frame: block.hintFrame
    })
  }
  cached = { context, genesis, codes: state.codes, blocks, digests }
  return cached
}
