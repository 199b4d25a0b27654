/**
 * The baseline a hinted backup is measured against (App. E.4): blocks executed one after another, every
 * first access read on demand with the two-step lookup, behind reth's cross-block cache of storage values
 * and code. No hints, no prefetch, no reader threads.
 */
import {
  absorbBlock,
  type ChainContext,
  type CrossBlockCache,
  crossBlockCache,
  executeBlock,
  StoreState,
  type StoreTables
} from "@reef/chain"
import * as Effect from "effect/Effect"
import { stateReader } from "./remote-disk.js"
import { BackupDivergedError, type ReplayBlock, type ReplaySummary } from "./replayer.js"

export interface BaselineBlock {
  readonly number: number
  readonly execMs: number
  readonly storeReads: number
  readonly cacheHits: number
}

export const replayBaseline = (
  config: {
    readonly tables: StoreTables
    readonly chain: ChainContext
    readonly cache?: CrossBlockCache
    /** Emulated remote-disk delay per store seek, µs (a what-if: remote-disk.ts). */
    readonly latencyUs?: number
  },
  blocks: ReadonlyArray<ReplayBlock>,
  onBlock?: (record: BaselineBlock) => void
): Effect.Effect<ReplaySummary, BackupDivergedError> =>
  Effect.gen(function* () {
    const cache = config.cache ?? crossBlockCache()
    const started = performance.now()
    for (const block of blocks) {
      const blockStart = performance.now()
      const reader = stateReader(config.tables, config.latencyUs)
      const pre = new StoreState(reader, block.number - 1, reader.head(), cache)
      const outcome = executeBlock(block.number, block.txs, config.chain, pre)
      if (Buffer.compare(outcome.stateHash, block.stateHash) !== 0) {
        return yield* new BackupDivergedError({
          block: block.number,
          expected: Buffer.from(block.stateHash).toString("hex"),
          actual: outcome.stateHash.toString("hex")
        })
      }
      absorbBlock(cache, outcome.finalValues)
      onBlock?.({
        number: block.number,
        execMs: performance.now() - blockStart,
        storeReads: pre.counters.storeReads,
        cacheHits: pre.counters.cacheHits
      })
    }
    return { blocks: blocks.length, wallMs: performance.now() - started, hintsRejected: 0 }
  })
