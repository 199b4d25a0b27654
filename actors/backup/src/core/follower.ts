/**
 * The backup's follower (§4.2, App. E) as a pure state machine: which blocks to read from the streams,
 * when a batch of blocks (default 32) is cut and its keys prefetched, whether a block's hint is used,
 * refused or waited for, the order blocks execute in, the verdict on each block's state-change hash (a
 * hinted run that differs is run again on demand; a run without a hint that differs stops the backup),
 * what is persisted and when, where a restarted backup resumes, and the lag.
 *
 * No clock, no I/O: the shell feeds inputs (arrivals, timer expiries, completed effects) and performs the
 * outputs (fetch, credit, timers, prefetch, execute, persist, report). A restarted backup is a new core,
 * created at the head its store holds: whatever the previous incarnation executed but did not persist is
 * executed again, and nothing it persisted is.
 */
import type { Hint, HintErrorReason, Tx } from "@reef/chain/core"
import { type BatchPlan, planBatch } from "./plan.js"

/** A block as the stream carries it: transactions and the primary's state-change hash. */
export interface StreamBlock {
  readonly number: number
  readonly txs: ReadonlyArray<Tx>
  readonly stateHash: Uint8Array
}

/** Why a block runs without a hint: none came in time, or the codec refused the one that came. */
export type HintFailure = HintErrorReason | "missing"

/** A block's hint once it is settled: the decoded hint, or why there is none. */
export type HintVerdict =
  | { readonly _tag: "Accepted"; readonly hint: Hint }
  | { readonly _tag: "Refused"; readonly reason: HintFailure }

/** A first run uses the block's prefetched cache (on-demand reads for what it lacks); a re-run only reads on demand. */
export type ExecMode = "prefetched" | "on-demand"

export interface FollowerParams {
  /** Blocks per prefetch batch (the paper's default: 32). */
  readonly batchBlocks: number
  /** Reader threads the plan's key range is cut for. */
  readonly readers: number
  /** Batches prefetched or prefetching and not yet fully executed. */
  readonly batchesAhead: number
  /** Blocks the follower takes from the stream past the next batch's first block. */
  readonly windowBlocks: number
  /** Blocks verified and not yet persisted before the executor waits for the store. */
  readonly maxUnpersisted: number
  /** How long a block at the primary's head waits for its hint before it runs without one. */
  readonly hintWaitMs: number
  /**
   * How long a block behind the primary's head waits for its hint. The primary publishes a block's hint before
   * the next block, so behind the head the hint is in the stream, only not read yet: a late backup racing
   * through stored blocks read its block stream ahead of its hint stream (the hints are larger and decoded on
   * arrival) and, with hintWaitMs, replayed blocks without hints it had, counted as hint errors. Bounded so a
   * hint stream that stopped delivering costs a wait, never liveness.
   */
  readonly catchUpHintWaitMs: number
  /** How long a missing block is awaited (while later ones, or the primary's head, show it exists) before re-reading the stream from it. */
  readonly gapWaitMs: number
  /** Use hints (false: the baseline path, every block on demand). */
  readonly useHints: boolean
  /** Persist verified blocks (a following backup); false replays blocks a store already holds (archive). */
  readonly persist: boolean
}

export const defaultFollowerParams = (overrides: Partial<FollowerParams> = {}): FollowerParams => {
  const batchBlocks = overrides.batchBlocks ?? 32
  return {
    batchBlocks,
    readers: 4,
    batchesAhead: 3,
    windowBlocks: 4 * batchBlocks,
    maxUnpersisted: 128,
    hintWaitMs: 250,
    catchUpHintWaitMs: 5000,
    gapWaitMs: 1000,
    useHints: true,
    persist: true,
    ...overrides
  }
}

/** A block in a batch, with what the follower settled about its hint. */
export interface BatchedBlock {
  readonly block: StreamBlock
  readonly hint: HintVerdict
}

export interface BatchState {
  readonly id: number
  readonly blocks: ReadonlyArray<BatchedBlock>
  /** Blocks of this batch verified so far. */
  readonly done: number
  readonly prefetched: boolean
  /** The head of the store snapshot the batch was read from (a floor until its prefetch reports it). */
  readonly snapshotHead: number
}

/** A block's hint while its block is buffered: settled, or timed out (a hint arriving later still counts). */
type PendingHint = HintVerdict | { readonly _tag: "TimedOut" }

export type FollowerPhase = "catching-up" | "following" | "diverged" | "done"

export interface FollowerCounters {
  /** Block arrivals already buffered, batched or verified. */
  readonly duplicates: number
  /** Block arrivals past the window (they are read again when the follower gets there). */
  readonly outOfWindow: number
  /** Hints that came after their block was batched, or a second hint for a block. */
  readonly ignoredHints: number
  /** Times the stream was read again from a block that did not come. */
  readonly refetches: number
  readonly hintsRejected: number
  readonly hintFailures: number
}

export interface FollowerState {
  readonly params: FollowerParams
  readonly phase: FollowerPhase
  /** Last block the store holds: where a restart resumes. */
  readonly persisted: number
  /** Last block executed with the primary's state hash (persisted or about to be). */
  readonly verified: number
  /** First block not yet in a batch. */
  readonly nextBatch: number
  /** The primary's head as last seen (a block's arrival, or a poll). */
  readonly primaryHead: number
  /** Blocks below this may be delivered (flow control: the window past `nextBatch`). */
  readonly credit: number
  readonly blocks: ReadonlyMap<number, StreamBlock>
  readonly hints: ReadonlyMap<number, PendingHint>
  /** Issued batches, oldest first, until their last block is verified. */
  readonly batches: ReadonlyArray<BatchState>
  readonly nextBatchId: number
  /** The run in flight: the executor does one at a time. */
  readonly executing: { readonly block: number; readonly mode: ExecMode } | undefined
  /** The block a gap timer is armed for. */
  readonly gapTimer: number | undefined
  /** The source has no more blocks (archive replay). */
  readonly streamEnded: boolean
  /** Blocks of the verified ones whose hinted run was refused. */
  readonly rejected: ReadonlySet<number>
  readonly counters: FollowerCounters
}

export type FollowerInput =
  | { readonly _tag: "Start" }
  | { readonly _tag: "BlockArrived"; readonly block: StreamBlock }
  /** A hint as the shell decoded it (the codec's refusal is an input too: the follower decides what it costs). */
  | { readonly _tag: "HintArrived"; readonly block: number; readonly hint: Hint | { readonly error: HintFailure } }
  | { readonly _tag: "HintTimeout"; readonly block: number }
  | { readonly _tag: "GapTimeout"; readonly block: number }
  | { readonly _tag: "PrimaryHead"; readonly head: number }
  | { readonly _tag: "StreamEnded" }
  | { readonly _tag: "Prefetched"; readonly batch: number; readonly snapshotHead: number }
  | { readonly _tag: "Executed"; readonly block: number; readonly mode: ExecMode; readonly stateHash: Uint8Array }
  | { readonly _tag: "Persisted"; readonly block: number }

/** What one verified block cost and decided (the shell adds its timings). */
export interface BlockVerdict {
  readonly number: number
  readonly batch: number
  readonly hintedKeys: number
  readonly hintFailure: HintFailure | undefined
  /** The hinted run's hash differed and the on-demand run's matched: the hint was wrong. */
  readonly hintRejected: boolean
  readonly stateHash: Uint8Array
  readonly lag: number
}

export type FollowerOutput =
  /** Read the block and hint streams again from `from` (start, restart, or a block that did not come). */
  | { readonly _tag: "Fetch"; readonly from: number }
  /** Deliver blocks (and hints) below `until`; hold the rest. */
  | { readonly _tag: "Credit"; readonly until: number }
  | { readonly _tag: "ArmTimer"; readonly timer: "hint" | "gap"; readonly block: number; readonly afterMs: number }
  /** Read the batch's planned keys (sorted, sliced per reader) and report `Prefetched`. */
  | { readonly _tag: "Prefetch"; readonly batch: number; readonly plan: BatchPlan }
  /** Execute `block` on its parent's state (prefetched: through the batch's cache) and report its hash. */
  | {
      readonly _tag: "Execute"
      readonly block: StreamBlock
      readonly batch: number
      readonly index: number
      readonly mode: ExecMode
    }
  /** The run of `block` just reported is verified: write its changes (and report `Persisted`). */
  | { readonly _tag: "Persist"; readonly block: number }
  /** The batch is executed: drop its caches, and writes of blocks up to `visible` every snapshot holds. */
  | { readonly _tag: "ReleaseBatch"; readonly batch: number; readonly visible: number }
  | { readonly _tag: "Report"; readonly verdict: BlockVerdict }
  /** The primary's hash and ours differ on a run without a hint: stop, loudly. */
  | { readonly _tag: "Diverged"; readonly block: number; readonly expected: Uint8Array; readonly actual: Uint8Array }
  /** The source ended and every block it gave is verified (and persisted). */
  | { readonly _tag: "Done" }

export interface FollowerStep {
  readonly state: FollowerState
  readonly out: ReadonlyArray<FollowerOutput>
}

const ZERO_COUNTERS: FollowerCounters = {
  duplicates: 0,
  outOfWindow: 0,
  ignoredHints: 0,
  refetches: 0,
  hintsRejected: 0,
  hintFailures: 0
}

/** A follower whose store holds every block up to `head`: it resumes at head + 1. */
export const createFollower = (params: FollowerParams, head: number): FollowerState => ({
  params,
  phase: "catching-up",
  persisted: head,
  verified: head,
  nextBatch: head + 1,
  primaryHead: head,
  credit: head + 1,
  blocks: new Map(),
  hints: new Map(),
  batches: [],
  nextBatchId: 0,
  executing: undefined,
  gapTimer: undefined,
  streamEnded: false,
  rejected: new Set(),
  counters: ZERO_COUNTERS
})

export const lagOf = (s: FollowerState): number => Math.max(0, s.primaryHead - s.verified)

export const sameHash = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

const count = (s: FollowerState, name: keyof FollowerCounters, by = 1): FollowerState => ({
  ...s,
  counters: { ...s.counters, [name]: s.counters[name] + by }
})

const withMap = <K, V>(map: ReadonlyMap<K, V>, edit: (m: Map<K, V>) => void): ReadonlyMap<K, V> => {
  const copy = new Map(map)
  edit(copy)
  return copy
}

const hintReady = (s: FollowerState, n: number): boolean => !s.params.useHints || s.hints.has(n)

const settle = (pending: PendingHint | undefined, useHints: boolean): HintVerdict =>
  pending === undefined || pending._tag === "TimedOut" || !useHints ? { _tag: "Refused", reason: "missing" } : pending

const pipelineIdle = (s: FollowerState): boolean => s.batches.length === 0

/** Cuts batches while the pipeline has room: a full one, or what is ready when the pipeline is idle or the source ended. */
const cutBatches = (s: FollowerState, out: Array<FollowerOutput>): FollowerState => {
  let state = s
  while (state.phase !== "diverged" && state.batches.length < state.params.batchesAhead) {
    let end = state.nextBatch
    while (end - state.nextBatch < state.params.batchBlocks && state.blocks.has(end) && hintReady(state, end)) end++
    const size = end - state.nextBatch
    if (size === 0) break
    if (size < state.params.batchBlocks && !pipelineIdle(state) && !state.streamEnded) break
    const batched: Array<BatchedBlock> = []
    for (let n = state.nextBatch; n < end; n++) {
      batched.push({ block: state.blocks.get(n)!, hint: settle(state.hints.get(n), state.params.useHints) })
    }
    const first = state.nextBatch
    const blocks = withMap(state.blocks, (m) => {
      for (let n = first; n < end; n++) m.delete(n)
    })
    const hints = withMap(state.hints, (m) => {
      for (let n = first; n < end; n++) m.delete(n)
    })
    const plan = planBatch(
      batched.map(({ block, hint }) => ({
        number: block.number,
        hint: hint._tag === "Accepted" ? hint.hint : { error: hint.reason }
      })),
      state.params.readers
    )
    const batch: BatchState = {
      id: state.nextBatchId,
      blocks: batched,
      done: 0,
      prefetched: false,
      snapshotHead: state.persisted
    }
    const failures = batched.filter((b) => b.hint._tag === "Refused").length
    state = count(
      {
        ...state,
        blocks,
        hints,
        nextBatch: end,
        nextBatchId: state.nextBatchId + 1,
        batches: [...state.batches, batch]
      },
      "hintFailures",
      failures
    )
    out.push({ _tag: "Prefetch", batch: batch.id, plan })
  }
  return state
}

/** Starts the next run if the executor is free, the next batch is prefetched and the store keeps up. */
const startExecution = (s: FollowerState, out: Array<FollowerOutput>): FollowerState => {
  if (s.executing !== undefined || s.phase === "diverged") return s
  const batch = s.batches[0]
  if (batch === undefined || !batch.prefetched || batch.done >= batch.blocks.length) return s
  if (s.params.persist && s.verified - s.persisted >= s.params.maxUnpersisted) return s
  const { block } = batch.blocks[batch.done]!
  out.push({ _tag: "Execute", block, batch: batch.id, index: batch.done, mode: "prefetched" })
  return { ...s, executing: { block: block.number, mode: "prefetched" } }
}

/** The first block the follower lacks, and whether there is reason to think it exists. */
const firstMissing = (s: FollowerState): number | undefined => {
  let n = s.nextBatch
  while (s.blocks.has(n)) n++
  if (n >= s.credit || s.streamEnded) return undefined
  let later = s.primaryHead >= n
  if (!later) for (const b of s.blocks.keys()) if (b > n) later = true
  return later ? n : undefined
}

const armGapTimer = (s: FollowerState, out: Array<FollowerOutput>): FollowerState => {
  if (s.gapTimer !== undefined || s.phase === "diverged") return s
  const missing = firstMissing(s)
  if (missing === undefined) return s
  out.push({ _tag: "ArmTimer", timer: "gap", block: missing, afterMs: s.params.gapWaitMs })
  return { ...s, gapTimer: missing }
}

const updateCredit = (s: FollowerState, out: Array<FollowerOutput>): FollowerState => {
  const credit = s.nextBatch + s.params.windowBlocks
  if (credit <= s.credit) return s
  out.push({ _tag: "Credit", until: credit })
  return { ...s, credit }
}

const finishIfDone = (s: FollowerState, out: Array<FollowerOutput>): FollowerState => {
  if (!s.streamEnded || s.phase === "diverged" || s.phase === "done") return s
  if (s.batches.length > 0 || s.executing !== undefined || s.blocks.has(s.nextBatch)) return s
  if (s.params.persist && s.persisted < s.verified) return s
  out.push({ _tag: "Done" })
  return { ...s, phase: "done" }
}

/** After every input: cut what can be cut, run what can run, keep the stream flowing. */
const progress = (s: FollowerState, out: Array<FollowerOutput>): FollowerState =>
  finishIfDone(armGapTimer(updateCredit(startExecution(cutBatches(s, out), out), out), out), out)

const onBlock = (s: FollowerState, block: StreamBlock, out: Array<FollowerOutput>): FollowerState => {
  const n = block.number
  const seen = { ...s, primaryHead: Math.max(s.primaryHead, n) }
  if (n < s.nextBatch || s.blocks.has(n)) return count(seen, "duplicates")
  if (n >= s.credit) return count(seen, "outOfWindow")
  if (s.params.useHints && !s.hints.has(n)) {
    const afterMs = n < s.primaryHead ? s.params.catchUpHintWaitMs : s.params.hintWaitMs
    out.push({ _tag: "ArmTimer", timer: "hint", block: n, afterMs })
  }
  return { ...seen, blocks: withMap(s.blocks, (m) => m.set(n, block)) }
}

const onHint = (s: FollowerState, n: number, hint: Hint | { readonly error: HintFailure }): FollowerState => {
  if (!s.params.useHints || n < s.nextBatch || n >= s.credit) return count(s, "ignoredHints")
  const pending = s.hints.get(n)
  if (pending !== undefined && pending._tag !== "TimedOut") return count(s, "ignoredHints")
  const verdict: HintVerdict =
    "error" in hint
      ? { _tag: "Refused", reason: hint.error }
      : hint.block !== n
        ? { _tag: "Refused", reason: "block-mismatch" }
        : { _tag: "Accepted", hint }
  return { ...s, hints: withMap(s.hints, (m) => m.set(n, verdict)) }
}

const onExecuted = (
  s: FollowerState,
  input: Extract<FollowerInput, { _tag: "Executed" }>,
  out: Array<FollowerOutput>
): FollowerState => {
  if (s.executing === undefined || s.executing.block !== input.block || s.executing.mode !== input.mode) return s
  const batch = s.batches[0]!
  const { block, hint } = batch.blocks[batch.done]!
  if (!sameHash(input.stateHash, block.stateHash)) {
    if (input.mode === "prefetched" && hint._tag === "Accepted") {
      out.push({ _tag: "Execute", block, batch: batch.id, index: batch.done, mode: "on-demand" })
      return count(
        {
          ...s,
          executing: { block: block.number, mode: "on-demand" },
          rejected: new Set(s.rejected).add(block.number)
        },
        "hintsRejected"
      )
    }
    out.push({ _tag: "Diverged", block: block.number, expected: block.stateHash, actual: input.stateHash })
    return { ...s, phase: "diverged", executing: undefined }
  }
  const verified = block.number
  if (s.params.persist) out.push({ _tag: "Persist", block: verified })
  const rejected = s.rejected.has(verified)
  const next: FollowerState = {
    ...s,
    executing: undefined,
    verified,
    persisted: s.params.persist ? s.persisted : verified,
    rejected: rejected ? withSetDeleted(s.rejected, verified) : s.rejected
  }
  const lag = lagOf(next)
  out.push({
    _tag: "Report",
    verdict: {
      number: verified,
      batch: batch.id,
      hintedKeys: hint._tag === "Accepted" ? hint.hint.storage.length : 0,
      hintFailure: hint._tag === "Refused" ? hint.reason : undefined,
      hintRejected: rejected,
      stateHash: input.stateHash,
      lag
    }
  })
  const advanced: BatchState = { ...batch, done: batch.done + 1 }
  const finished = advanced.done === advanced.blocks.length
  const batches = finished ? s.batches.slice(1) : [advanced, ...s.batches.slice(1)]
  const phase = lag === 0 ? "following" : next.phase
  const state: FollowerState = { ...next, batches, phase }
  if (finished && s.params.persist) out.push({ _tag: "ReleaseBatch", batch: batch.id, visible: visibleHead(state) })
  else if (finished) out.push({ _tag: "ReleaseBatch", batch: batch.id, visible: verified })
  return state
}

const withSetDeleted = <T>(set: ReadonlySet<T>, value: T): ReadonlySet<T> => {
  const copy = new Set(set)
  copy.delete(value)
  return copy
}

/** The newest block every snapshot still in use holds, and the store too. */
const visibleHead = (s: FollowerState): number => Math.min(s.persisted, ...s.batches.map((b) => b.snapshotHead))

export const stepFollower = (s: FollowerState, input: FollowerInput): FollowerStep => {
  const out: Array<FollowerOutput> = []
  if (s.phase === "diverged" || s.phase === "done") {
    return { state: input._tag === "PrimaryHead" ? { ...s, primaryHead: Math.max(s.primaryHead, input.head) } : s, out }
  }
  let state = s
  switch (input._tag) {
    case "Start":
      out.push({ _tag: "Fetch", from: s.nextBatch })
      break
    case "BlockArrived":
      state = onBlock(s, input.block, out)
      break
    case "HintArrived":
      state = onHint(s, input.block, input.hint)
      break
    case "HintTimeout":
      if (input.block >= s.nextBatch && !s.hints.has(input.block)) {
        state = { ...s, hints: withMap(s.hints, (m) => m.set(input.block, { _tag: "TimedOut" })) }
      }
      break
    case "GapTimeout": {
      state = { ...s, gapTimer: undefined }
      if (input.block === firstMissing(state)) {
        out.push({ _tag: "Fetch", from: input.block })
        state = count(state, "refetches")
      }
      break
    }
    case "PrimaryHead":
      state = { ...s, primaryHead: Math.max(s.primaryHead, input.head) }
      if (lagOf(state) === 0 && state.executing === undefined && state.batches.length === 0) {
        state = { ...state, phase: "following" }
      }
      break
    case "StreamEnded":
      state = { ...s, streamEnded: true }
      break
    case "Prefetched":
      state = {
        ...s,
        batches: s.batches.map((b) =>
          b.id === input.batch ? { ...b, prefetched: true, snapshotHead: input.snapshotHead } : b
        )
      }
      break
    case "Executed":
      state = onExecuted(s, input, out)
      break
    case "Persisted":
      if (input.block === s.persisted + 1 && input.block <= s.verified) state = { ...s, persisted: input.block }
      break
  }
  return { state: progress(state, out), out }
}
