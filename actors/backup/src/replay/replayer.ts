/**
 * Hint-based replay (§4.2, Algorithm 2, App. E/F.2): a prefetcher and an executor joined by a bounded
 * channel, so the backup takes max(prefetch, execution) rather than their sum.
 *
 * The prefetcher takes up to `batchBlocks` blocks, decompresses and checks their hints, plans one sorted
 * read of the batch (plan.ts), has k reader threads read it (reader-pool.ts), builds each block's cache and
 * puts the batch on the channel. The executor runs blocks in order, each from its own cache (dropped after
 * it), falling back to on-demand reads for anything the cache lacks.
 *
 * Hints are advisory: after each block the executor compares its state-change hash with the primary's. On
 * a difference it executes the block again on demand only (a hint may claim a key never changed after
 * the block when it did, or that a key is zero when it is not: values the executor trusted). Only if that
 * run differs too does the backup stop, loudly: then the primary's block and its own state disagree.
 */
import {
  type ChainContext,
  commitBlock,
  executeBlock,
  HintError,
  type HintErrorReason,
  readHint,
  StateReader,
  type StorageKey,
  type StoreTables,
  type Tx
} from "@reef/chain"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import { type BatchBlock, type BatchPlan, planBatch } from "./plan.js"
import { OnDemandState, PendingWrites, PrefetchedState } from "./prefetched-state.js"
import { type BatchRead, ReaderError, ReaderPool } from "./reader-pool.js"
import type { ReadStats } from "./reader-protocol.js"

/** A block as a backup receives it: transactions, the primary's state-change hash, the hint's wire bytes. */
export interface ReplayBlock {
  readonly number: number
  readonly txs: ReadonlyArray<Tx>
  readonly stateHash: Uint8Array
  /** Absent when no hint arrived (the block then runs on demand). */
  readonly hint?: Uint8Array
}

/** The backup's state and the primary's disagree at `block`, with or without the hint. */
export class BackupDivergedError extends Data.TaggedError("BackupDivergedError")<{
  readonly block: number
  readonly expected: string
  readonly actual: string
}> {
  override get message() {
    return `backup diverged at block ${this.block}: primary's state hash ${this.expected}, ours ${this.actual}`
  }
}

export class CommitError extends Data.TaggedError("CommitError")<{ readonly block: number; readonly cause: unknown }> {
  override get message() {
    return `committing block ${this.block} failed: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

export interface ReplayConfig {
  readonly tables: StoreTables
  readonly chain: ChainContext
  /** Reader threads (k). */
  readonly readers: number
  /** Blocks per prefetch batch (the paper's default: 32). */
  readonly batchBlocks?: number
  /** Prefetched batches the channel holds ahead of the executor. */
  readonly channelBatches?: number
  /**
   * `follow`: the store is the backup's own copy at the parent of the first block; each verified block is
   * committed to it. `archive`: the store already holds the blocks (the paper's historical replay);
   * nothing is written.
   */
  readonly mode: "follow" | "archive"
}

export interface BlockReplay {
  readonly number: number
  readonly batch: number
  /** Time the executor waited on the channel before this block (only a batch's first block waits). */
  readonly waitMs: number
  /** Executing the block, checking its hash, and its on-demand re-execution if there was one. */
  readonly execMs: number
  readonly hintedKeys: number
  readonly hits: number
  readonly misses: number
  readonly hintError: HintErrorReason | "missing" | undefined
  /** The hinted run's hash differed and the on-demand run's matched: the hint was wrong. */
  readonly hintRejected: boolean
  readonly stateHash: Buffer
  /** Wall-clock end of the block (performance.now()). */
  readonly finishedAt: number
}

export interface BatchReplay {
  readonly batch: number
  readonly firstBlock: number
  readonly lastBlock: number
  readonly plan: BatchPlan["counts"]
  readonly codeEntries: number
  readonly stats: ReadStats
  readonly prefetchStart: number
  readonly prefetchEnd: number
  readonly slowestReaderMs: number
}

export interface ReplayObserver {
  readonly onBlock?: (record: BlockReplay) => void
  readonly onBatch?: (record: BatchReplay) => void
}

/** Takes up to `max` blocks (waiting for at least one); an empty answer ends the replay. */
export type TakeBlocks = (max: number) => Effect.Effect<ReadonlyArray<ReplayBlock>>

interface PrefetchedBlock {
  readonly block: ReplayBlock
  readonly cache: Map<StorageKey, number>
  readonly hintedKeys: number
  readonly hintError: HintErrorReason | "missing" | undefined
}

interface PrefetchedBatch {
  readonly batch: number
  readonly blocks: ReadonlyArray<PrefetchedBlock>
  readonly read: BatchRead
}

const decode = (block: ReplayBlock): BatchBlock["hint"] => {
  if (block.hint === undefined) return { error: "missing" }
  try {
    return readHint(block.hint, block.number)
  } catch (error) {
    if (error instanceof HintError) return { error: error.reason }
    throw error
  }
}

const nextTurn = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

const sameHash = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0

/** Uncommitted blocks allowed before the executor waits for the store to catch up (bounds PendingWrites). */
const MAX_UNCOMMITTED_BLOCKS = 128

export interface ReplaySummary {
  readonly blocks: number
  readonly wallMs: number
  readonly hintsRejected: number
}

export const replay = (
  config: ReplayConfig,
  take: TakeBlocks,
  observer: ReplayObserver = {}
): Effect.Effect<ReplaySummary, BackupDivergedError | ReaderError | CommitError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const batchBlocks = config.batchBlocks ?? 32
      const pool = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => ReaderPool.start(config.tables.path, config.readers),
          catch: (cause) => new ReaderError({ reason: `start: ${String(cause)}` })
        }),
        (pool) => Effect.promise(() => pool.close())
      )
      const channel = yield* Queue.bounded<PrefetchedBatch | "end" | ReaderError>(config.channelBatches ?? 2)
      const follow = config.mode === "follow"
      const pending = follow ? new PendingWrites() : undefined
      /** Snapshot heads of batches prefetched and not yet fully executed (PendingWrites must cover them). */
      const liveSnapshots: Array<number> = []
      let committedHead = follow ? new StateReader(config.tables).head() : 0
      let commitFailure: CommitError | undefined
      const commits: Array<Promise<unknown>> = []
      let batchCount = 0

      const prefetcher = Effect.gen(function* () {
        while (true) {
          const blocks = yield* take(batchBlocks)
          if (blocks.length === 0) break
          const batch = batchCount++
          const prefetchStart = performance.now()
          const plan = planBatch(
            blocks.map((b) => ({ number: b.number, hint: decode(b) })),
            pool.size
          )
          const read = yield* Effect.tryPromise({
            try: () => pool.read(plan),
            catch: (cause) => (cause instanceof ReaderError ? cause : new ReaderError({ reason: String(cause) }))
          })
          const prefetched = blocks.map((block, i): PrefetchedBlock => {
            const planned = plan.blocks[i]!
            const cache = new Map<StorageKey, number>()
            for (let k = 0; k < planned.keys.length; k++) cache.set(planned.keys[k]!, read.values[planned.entries[k]!]!)
            return { block, cache, hintedKeys: planned.keys.length, hintError: planned.hintError }
          })
          liveSnapshots.push(read.head)
          observer.onBatch?.({
            batch,
            firstBlock: blocks[0]!.number,
            lastBlock: blocks[blocks.length - 1]!.number,
            plan: plan.counts,
            codeEntries: plan.code.length,
            stats: read.stats,
            prefetchStart,
            prefetchEnd: performance.now(),
            slowestReaderMs: read.slowestReaderMs
          })
          yield* Queue.offer(channel, { batch, blocks: prefetched, read })
        }
        yield* Queue.offer(channel, "end")
      }).pipe(Effect.catchAll((error) => Queue.offer(channel, error)))

      const executeOne = (prefetched: PrefetchedBlock, batch: PrefetchedBatch, waitMs: number) =>
        Effect.gen(function* () {
          const { block } = prefetched
          const started = performance.now()
          const reader = new StateReader(config.tables)
          const head = reader.head()
          const onDemand = () => new OnDemandState(reader, block.number - 1, head, pending)
          const pre = new PrefetchedState(prefetched.cache, batch.read.code, batch.read.head, onDemand(), pending)
          let outcome = executeBlock(block.number, block.txs, config.chain, pre)
          let hintRejected = false
          if (!sameHash(outcome.stateHash, block.stateHash)) {
            outcome = executeBlock(block.number, block.txs, config.chain, onDemand())
            if (!sameHash(outcome.stateHash, block.stateHash)) {
              return yield* new BackupDivergedError({
                block: block.number,
                expected: Buffer.from(block.stateHash).toString("hex"),
                actual: outcome.stateHash.toString("hex")
              })
            }
            hintRejected = true
          }
          if (follow) {
            pending!.record(block.number, outcome.changes)
            const number = block.number
            commits.push(
              commitBlock(config.tables, number, outcome.changes, number - 1).then(
                () => {
                  committedHead = Math.max(committedHead, number)
                },
                (cause) => {
                  commitFailure ??= new CommitError({ block: number, cause })
                }
              )
            )
          }
          const finishedAt = performance.now()
          observer.onBlock?.({
            number: block.number,
            batch: batch.batch,
            waitMs,
            execMs: finishedAt - started,
            hintedKeys: prefetched.hintedKeys,
            hits: pre.counts.hits,
            misses: pre.counts.misses,
            hintError: prefetched.hintError,
            hintRejected,
            stateHash: outcome.stateHash,
            finishedAt
          })
          return hintRejected
        })

      const started = performance.now()
      const prefetchFiber = yield* Effect.fork(prefetcher)
      let blocks = 0
      let hintsRejected = 0
      while (true) {
        const waitStart = performance.now()
        const item = yield* Queue.take(channel)
        let waitMs = performance.now() - waitStart
        if (item === "end") break
        if (item instanceof ReaderError) return yield* item
        for (const prefetched of item.blocks) {
          if (commitFailure !== undefined) return yield* commitFailure
          if (follow && commits.length > MAX_UNCOMMITTED_BLOCKS) {
            yield* Effect.promise(() => Promise.all(commits.splice(0, commits.length - MAX_UNCOMMITTED_BLOCKS / 2)))
          }
          if (yield* executeOne(prefetched, item, waitMs)) hintsRejected++
          waitMs = 0
          blocks++
          // One event-loop turn between blocks: the readers' answers get in and the prefetcher moves on.
          yield* nextTurn
        }
        liveSnapshots.shift()
        if (follow) pending!.prune(Math.min(committedHead, ...liveSnapshots))
      }
      yield* Effect.promise(() => Promise.all(commits))
      if (commitFailure !== undefined) return yield* commitFailure
      yield* Fiber.join(prefetchFiber)
      return { blocks, wallMs: performance.now() - started, hintsRejected }
    })
  )

/** TakeBlocks over an array (benchmarks, tests). */
export const takeFromArray = (blocks: ReadonlyArray<ReplayBlock>): TakeBlocks => {
  let next = 0
  return (max) =>
    Effect.sync(() => {
      const taken = blocks.slice(next, next + max)
      next += taken.length
      return taken
    })
}
