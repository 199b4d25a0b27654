/**
 * The backup's replay shell: performs what the follower core (core/follower.ts) decides, nothing more.
 * A prefetch is read by k reader threads (reader-pool.ts) while the executor runs earlier blocks, so the
 * backup takes max(prefetch, execution) rather than their sum (§4.2, Algorithm 2, App. E/F.2); each block
 * runs from its own cache (dropped with its batch), falling back to on-demand reads for what it lacks;
 * verified blocks are committed in order while later ones execute (their writes answer reads first).
 *
 * The blocks come from a source: an array (`replay`: benchmarks, tests, archive replay) or the primary's
 * JetStream streams (the actor, stream-source.ts). The core says where to read them from and how far.
 */
import {
  type ChainContext,
  commitBlock,
  executeBlock,
  type Hint,
  HintError,
  readHint,
  StateReader,
  type StorageKey,
  type StoreTables,
  type Tx
} from "@reef/chain"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import {
  createFollower,
  defaultFollowerParams,
  type FollowerInput,
  type FollowerOutput,
  type FollowerParams,
  type FollowerState,
  type HintFailure,
  stepFollower
} from "../core/follower.js"
import { type BatchPlan, blockCaches } from "../core/plan.js"
import { OnDemandState, PendingWrites, PrefetchedState } from "./prefetched-state.js"
import { type BatchRead, ReaderError, ReaderPool } from "./reader-pool.js"
import type { ReadStats } from "./reader-protocol.js"
import { stateReader } from "./remote-disk.js"

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
  /**
   * `follow`: the store is the backup's own copy at the parent of the first block; each verified block is
   * committed to it. `archive`: the store already holds the blocks (the paper's historical replay);
   * nothing is written.
   */
  readonly mode: "follow" | "archive"
  /** The rest of the follower's parameters (defaults: core/follower.ts). */
  readonly follower?: Partial<FollowerParams>
  /** Emulated remote-disk delay per store seek, µs (a what-if: remote-disk.ts). */
  readonly latencyUs?: number
}

export interface BlockReplay {
  readonly number: number
  readonly batch: number
  /** Time the executor waited for this block's prefetch (only a batch's first block waits). */
  readonly waitMs: number
  /** Executing the block, checking its hash, and its on-demand re-execution if there was one. */
  readonly execMs: number
  readonly hintedKeys: number
  readonly hits: number
  readonly misses: number
  readonly hintError: HintFailure | undefined
  /** The hinted run's hash differed and the on-demand run's matched: the hint was wrong. */
  readonly hintRejected: boolean
  readonly stateHash: Buffer
  /** Blocks behind the primary's head when this one was verified. */
  readonly lag: number
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
  /** The follower's state after every step (status pages read it). */
  readonly onState?: (state: FollowerState) => void
}

/** Takes up to `max` blocks (waiting for at least one); an empty answer ends the replay. */
export type TakeBlocks = (max: number) => Effect.Effect<ReadonlyArray<ReplayBlock>>

export interface ReplaySummary {
  readonly blocks: number
  readonly wallMs: number
  readonly hintsRejected: number
}

/** Where blocks come from: the core's Fetch and Credit, carried out; arrivals go to `offer`. */
export interface FollowerSource {
  readonly fetch: (from: number) => Effect.Effect<void>
  readonly credit: (until: number) => Effect.Effect<void>
}
export type Offer = (input: FollowerInput) => void
export type MakeSource = (offer: Offer) => Effect.Effect<FollowerSource, never, Scope.Scope>

/** A hint's wire bytes as the core takes them: decoded, or why not. */
export const decodeHintFrame = (
  frame: Uint8Array | undefined,
  block: number
): Hint | { readonly error: HintFailure } => {
  if (frame === undefined) return { error: "missing" }
  try {
    return readHint(frame, block)
  } catch (error) {
    if (error instanceof HintError) return { error: error.reason }
    throw error
  }
}

const nextTurn = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

type ShellFailure = { readonly _tag: "ShellFailed"; readonly error: ReaderError | CommitError }

interface PrefetchedBatch {
  readonly read: BatchRead
  /** Each block's cache, by its index in the batch. */
  readonly caches: ReadonlyArray<ReadonlyMap<StorageKey, number>>
  readonly firstBlock: number
}

/** The block the executor is on: what the shell measures of it across its runs. */
interface Running {
  readonly number: number
  readonly waitMs: number
  execMs: number
  hits: number
  misses: number
  changes: ReturnType<typeof executeBlock>["changes"]
}

export interface FollowConfig {
  readonly tables: StoreTables
  readonly chain: ChainContext
  readonly params: FollowerParams
  /** The block the store holds up to (follow), or the parent of the first block (archive). */
  readonly head: number
  /** Emulated remote-disk delay per store seek, µs (a what-if: remote-disk.ts). */
  readonly latencyUs?: number
}

/**
 * Runs the follower core over `source` until it is done (the source ended) or diverges; performs its
 * effects with the reader pool, the executor and the store.
 */
export const follow = (
  config: FollowConfig,
  makeSource: MakeSource,
  observer: ReplayObserver = {}
): Effect.Effect<ReplaySummary, BackupDivergedError | ReaderError | CommitError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { params, tables } = config
      const pool = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => ReaderPool.start(tables.path, params.readers, config.latencyUs),
          catch: (cause) => new ReaderError({ reason: `start: ${String(cause)}` })
        }),
        (pool) => Effect.promise(() => pool.close())
      )
      const inputs = yield* Queue.unbounded<FollowerInput | ShellFailure>()
      const offer: Offer = (input) => Queue.unsafeOffer(inputs, input)
      const fail = (error: ReaderError | CommitError) => Queue.unsafeOffer(inputs, { _tag: "ShellFailed", error })
      const timers = new Set<ReturnType<typeof setTimeout>>()
      yield* Effect.addFinalizer(() => Effect.sync(() => timers.forEach(clearTimeout)))
      const source = yield* makeSource(offer)
      const pending = params.persist ? new PendingWrites() : undefined
      const prefetched = new Map<number, PrefetchedBatch>()
      const commits = new Set<Promise<unknown>>()
      let state = createFollower(params, config.head)
      let running: Running | undefined
      let idleSince = performance.now()
      let blocks = 0
      const started = performance.now()

      const prefetch = (batch: number, plan: BatchPlan) =>
        Effect.gen(function* () {
          const prefetchStart = performance.now()
          const read = yield* Effect.tryPromise({
            try: () => pool.read(plan),
            catch: (cause) => (cause instanceof ReaderError ? cause : new ReaderError({ reason: String(cause) }))
          })
          const caches = blockCaches(plan, read.values)
          prefetched.set(batch, { read, caches, firstBlock: plan.blocks[0]!.number })
          observer.onBatch?.({
            batch,
            firstBlock: plan.blocks[0]!.number,
            lastBlock: plan.blocks[plan.blocks.length - 1]!.number,
            plan: plan.counts,
            codeEntries: plan.code.length,
            stats: read.stats,
            prefetchStart,
            prefetchEnd: performance.now(),
            slowestReaderMs: read.slowestReaderMs
          })
          offer({ _tag: "Prefetched", batch, snapshotHead: read.head })
        }).pipe(
          Effect.catchAll((error) => Effect.sync(() => fail(error))),
          Effect.forkScoped
        )

      const execute = (output: Extract<FollowerOutput, { _tag: "Execute" }>) => {
        const { block } = output
        const now = performance.now()
        if (running?.number !== block.number) {
          running = {
            number: block.number,
            waitMs: output.index === 0 ? now - idleSince : 0,
            execMs: 0,
            hits: 0,
            misses: 0,
            changes: []
          }
        }
        const reader = stateReader(tables, config.latencyUs)
        const head = reader.head()
        const onDemand = new OnDemandState(reader, block.number - 1, head, pending)
        let outcome: ReturnType<typeof executeBlock>
        if (output.mode === "prefetched") {
          const batch = prefetched.get(output.batch)!
          const pre = new PrefetchedState(
            batch.caches[output.index]!,
            batch.read.code,
            batch.read.head,
            onDemand,
            pending
          )
          outcome = executeBlock(block.number, block.txs, config.chain, pre)
          running.hits += pre.counts.hits
          running.misses += pre.counts.misses
        } else {
          outcome = executeBlock(block.number, block.txs, config.chain, onDemand)
        }
        running.changes = outcome.changes
        idleSince = performance.now()
        running.execMs += idleSince - now
        offer({ _tag: "Executed", block: block.number, mode: output.mode, stateHash: outcome.stateHash })
      }

      const persist = (number: number) => {
        const changes = running!.changes
        pending!.record(number, changes)
        const commit: Promise<unknown> = commitBlock(tables, number, changes, number - 1).then(
          () => offer({ _tag: "Persisted", block: number }),
          (cause) => fail(new CommitError({ block: number, cause }))
        )
        commits.add(commit)
        void commit.finally(() => commits.delete(commit))
      }

      const perform = (output: FollowerOutput) =>
        Effect.gen(function* () {
          switch (output._tag) {
            case "Fetch":
              return yield* source.fetch(output.from)
            case "Credit":
              return yield* source.credit(output.until)
            case "ArmTimer": {
              const timer = setTimeout(() => {
                timers.delete(timer)
                offer({ _tag: output.timer === "hint" ? "HintTimeout" : "GapTimeout", block: output.block })
              }, output.afterMs)
              timers.add(timer)
              return
            }
            case "Prefetch":
              return yield* prefetch(output.batch, output.plan)
            case "Execute":
              return execute(output)
            case "Persist":
              return persist(output.block)
            case "ReleaseBatch":
              prefetched.delete(output.batch)
              pending?.prune(output.visible)
              return
            case "Report": {
              const { verdict } = output
              blocks++
              observer.onBlock?.({
                number: verdict.number,
                batch: verdict.batch,
                waitMs: running!.waitMs,
                execMs: running!.execMs,
                hintedKeys: verdict.hintedKeys,
                hits: running!.hits,
                misses: running!.misses,
                hintError: verdict.hintFailure,
                hintRejected: verdict.hintRejected,
                stateHash: Buffer.from(verdict.stateHash),
                lag: verdict.lag,
                finishedAt: idleSince
              })
              return
            }
            case "Diverged":
              return yield* new BackupDivergedError({
                block: output.block,
                expected: Buffer.from(output.expected).toString("hex"),
                actual: Buffer.from(output.actual).toString("hex")
              })
            case "Done":
              return
          }
        })

      offer({ _tag: "Start" })
      while (state.phase !== "done") {
        const input = yield* Queue.take(inputs)
        if (input._tag === "ShellFailed") return yield* input.error
        const step = stepFollower(state, input)
        state = step.state
        let executed = false
        for (const output of step.out) {
          yield* perform(output)
          if (output._tag === "Execute") executed = true
        }
        observer.onState?.(state)
        // One event-loop turn after a run: the readers' answers get in and the prefetches move on.
        if (executed) yield* nextTurn
      }
      return {
        blocks,
        wallMs: performance.now() - started,
        hintsRejected: state.counters.hintsRejected
      }
    })
  )

/** A source over `take`: delivers what it gives within the credit, then ends (it cannot be re-read). */
const takeSource =
  (take: TakeBlocks, first: ReadonlyArray<ReplayBlock>): MakeSource =>
  (offer) =>
    Effect.gen(function* () {
      const credit = yield* SubscriptionRef.make(0)
      const deliver = (blocks: ReadonlyArray<ReplayBlock>) => {
        for (const block of blocks) {
          offer({ _tag: "HintArrived", block: block.number, hint: decodeHintFrame(block.hint, block.number) })
          offer({ _tag: "BlockArrived", block: { number: block.number, txs: block.txs, stateHash: block.stateHash } })
        }
      }
      const creditAbove = (next: number) =>
        credit.changes.pipe(
          Stream.filter((c) => c > next),
          Stream.runHead
        )
      yield* Effect.gen(function* () {
        let batch = first
        let next = first[0]!.number
        while (batch.length > 0) {
          // Nothing before the follower has started and said how far it takes blocks.
          if ((yield* creditAbove(next))._tag === "None") break
          deliver(batch)
          next = batch[batch.length - 1]!.number + 1
          const until = yield* creditAbove(next)
          if (until._tag === "None") break
          batch = yield* take(until.value - next)
        }
        offer({ _tag: "StreamEnded" })
      }).pipe(Effect.forkScoped)
      return {
        // The array is read once, in order: it has nothing to re-read.
        fetch: () => Effect.void,
        credit: (until) => SubscriptionRef.set(credit, until)
      }
    })

/**
 * Replays the blocks `take` gives (archive: on a store that holds them; follow: on the backup's own store,
 * from its head + 1), with hint-based prefetch.
 */
export const replay = (
  config: ReplayConfig,
  take: TakeBlocks,
  observer: ReplayObserver = {}
): Effect.Effect<ReplaySummary, BackupDivergedError | ReaderError | CommitError> =>
  Effect.gen(function* () {
    const batchBlocks = config.batchBlocks ?? 32
    const first = yield* take(batchBlocks)
    if (first.length === 0) return { blocks: 0, wallMs: 0, hintsRejected: 0 }
    const follow_ = config.mode === "follow"
    const head = follow_ ? new StateReader(config.tables).head() : first[0]!.number - 1
    const params = defaultFollowerParams({
      batchBlocks,
      readers: config.readers,
      persist: follow_,
      ...config.follower
    })
    return yield* follow(
      {
        tables: config.tables,
        chain: config.chain,
        params,
        head,
        ...(config.latencyUs === undefined ? {} : { latencyUs: config.latencyUs })
      },
      takeSource(take, first),
      observer
    )
  })

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
