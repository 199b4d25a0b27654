/**
 * The `chain` primary (Ira's primary, Algorithm 1): produces blocks from the seeded workload, executes each
 * with the hint recorder attached, commits it to its store, and publishes the block and its hint on the
 * chain's JetStream streams (streams.ts), where a stream's sequence is the block number.
 *
 * Order of effects per block: execute, commit (state, block record and hint in one LMDB transaction), then
 * publish. A restart therefore finds every published block in its store, and publishes again whatever the
 * streams lack (a crash between commit and publish, or a new nats-server). A stream ahead of the store means
 * they belong to different chains: the primary refuses to start.
 *
 * Traces: an `ira.chain.block` span per block with `ira.hint.construct` and `ira.hint.serialize` children;
 * its context travels in the published messages' `traceparent` header, so a backup's block span links to it.
 */
import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { headers as natsHeaders } from "@nats-io/nats-core"
import { decodeWhole, defineActor, type Kernel, KernelConfig, PresenceDetails, spawn, TYPE_HEADER } from "@reef/kernel"
import { currentTraceparent, MessagingTracing, TRACEPARENT_HEADER } from "@reef/observability/tracing"
import { ChainBlock, ChainHint, ChainInfo } from "@reef/proto"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { HintRecorder } from "../hint/recorder.js"
import { ChainContext } from "../runtime/execution.js"
import { encodeTxs } from "../runtime/transactions.js"
import {
  commitBlock,
  openTables,
  readBlockRecord,
  readGenesis,
  readHead,
  Source,
  StateReader,
  type StoreTables
} from "../state/store.js"
import { absorbBlock, crossBlockCache, StoreState } from "../state/store-state.js"
import {
  type ChainScale,
  type ChainSpec,
  ChainSpecError,
  chainSpec,
  contractsOf,
  decodeChainSpec,
  encodeChainSpec
} from "../workload/chain-spec.js"
import { generateBlock, type WorkloadSpec } from "../workload/generator.js"
import { writeGenesis } from "../workload/genesis.js"
import { executeAsPrimary, type PrimaryBlock } from "./execute.js"
import {
  CHAIN_BLOCK_TYPE,
  CHAIN_HINT_TYPE,
  chainStreams,
  ensureChainStreams,
  GENESIS_INFO_KEY,
  lastBlockOf,
  streamConnection
} from "./streams.js"

export const CHAIN_ROLE = "chain"

export class ChainError extends Data.TaggedError("ChainError")<{ readonly reason: string; readonly cause?: unknown }> {
  override get message() {
    return `chain primary: ${this.reason}${this.cause === undefined ? "" : `: ${String((this.cause as Error)?.message ?? this.cause)}`}`
  }
}

export interface ChainOptions {
  readonly id: string
  /** NATS server (JetStream enabled): the actor opens a connection of its own for the streams. */
  readonly natsUrl: string
  /** The chain's name (a subject token): streams and info bucket are named after it. */
  readonly chain: string
  /** The primary's store (a directory); created with the genesis of `scale` when empty. */
  readonly dbPath: string
  readonly scale: ChainScale
  readonly seed: number
  readonly workload: WorkloadSpec
  /** A block every this many ms (0: back to back). */
  readonly blockIntervalMs: number
  /** Stop producing once the head reaches this block. */
  readonly maxBlocks?: number
  /** fsync every commit (default true). */
  readonly durable?: boolean
}

export interface ChainHandle {
  readonly head: () => number
  readonly spec: ChainSpec
}

/** NATS payloads above this are refused by the server; a larger hint is sent empty (the block runs on demand). */
const MAX_HINT_PAYLOAD = 1000 * 1024
const msToNs = (ms: number) => BigInt(Math.round(ms * 1e6))

const chainError = (reason: string) => (cause: unknown) => new ChainError({ reason, cause })

/** The primary's store with its genesis: written if new, checked against `spec` if not. */
const openStore = (options: ChainOptions, spec: ChainSpec) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const tables = openTables({ path: options.dbPath, durable: options.durable ?? true })
        const stored = readGenesis(tables)
        if (stored === undefined) writeGenesis(tables, spec)
        else if (stored.toString() !== encodeChainSpec(spec).toString()) {
          void tables.env.close()
          throw new Error(
            `store ${options.dbPath} holds another chain's genesis (${stored.toString().slice(0, 80)}...)`
          )
        }
        return tables
      },
      catch: chainError("opening the store")
    }),
    (tables) => Effect.promise(() => tables.env.close())
  )

export const runChain = (options: ChainOptions): Effect.Effect<ChainHandle, ChainError, Kernel | Scope.Scope> =>
  Effect.gen(function* () {
    const config = yield* KernelConfig
    // A connection of its own (JetStream), closed with the actor's scope.
    const nc = yield* streamConnection(options.natsUrl, `reef-${options.id}-jetstream`).pipe(
      Effect.mapError(chainError(`connecting to ${options.natsUrl}`))
    )
    const tracing = yield* MessagingTracing
    const spec = chainSpec(options.scale, options.seed)
    const tables = yield* openStore(options, spec)
    const streams = chainStreams(config.cluster, options.chain)
    const jsm = yield* Effect.tryPromise({
      try: () => jetstreamManager(nc),
      catch: chainError("JetStream not enabled?")
    })
    const js = jetstream(nc)
    yield* Effect.tryPromise({ try: () => ensureChainStreams(jsm, streams), catch: chainError("creating the streams") })
    yield* Effect.tryPromise({
      try: async () => {
        const kv = await new Kvm(nc).create(streams.info, { history: 1 })
        await kv.put(
          GENESIS_INFO_KEY,
          ChainInfo.encode({ chain: options.chain, genesisSpec: encodeChainSpec(spec), primaryId: options.id }).finish()
        )
      },
      catch: chainError("publishing the chain's genesis")
    })

    let head = readHead(tables)
    yield* catchUpStreams(js, tables, streams, head, () =>
      Effect.tryPromise({
        try: () => lastBlockOf(jsm, streams.blocks.stream),
        catch: chainError("reading the block stream")
      })
    )
    yield* Effect.tryPromise({
      try: () => lastBlockOf(jsm, streams.hints.stream),
      catch: chainError("reading the hint stream")
    }).pipe(Effect.flatMap((last) => republish(js, tables, streams.hints.subject, CHAIN_HINT_TYPE, "hint", last, head)))

    const chain = contractsOf(spec)
    const context = new ChainContext(spec.seed, spec.users)
    const cache = crossBlockCache()
    // A live primary reads as of its head: a read the cache answers is plain if it holds a value, zero if not.
    const recorder = new HintRecorder((_key, value) => (value === 0 ? Source.Zero : Source.Plain))

    const produce = Effect.gen(function* () {
      const number = head + 1
      const txs = generateBlock(chain, options.workload, number)
      const reader = new StateReader(tables)
      const block = executeAsPrimary(
        number,
        txs,
        context,
        new StoreState(reader, number - 1, number - 1, cache),
        recorder
      )
      absorbBlock(cache, block.outcome.finalValues)
      const blockBytes = ChainBlock.encode({
        number,
        transactions: encodeTxs(txs),
        stateHash: block.outcome.stateHash,
        transactionCount: txs.length,
        producedAtUnixMs: Date.now()
      }).finish()
      const frame = block.hintFrame.length <= MAX_HINT_PAYLOAD ? block.hintFrame : Buffer.alloc(0)
      const hintBytes = ChainHint.encode({ number, frame }).finish()
      yield* Effect.tryPromise({
        try: () =>
          commitBlock(tables, number, block.outcome.changes, number - 1, { block: blockBytes, hint: hintBytes }),
        catch: chainError(`committing block ${number}`)
      })
      head = number
      if (tracing) yield* recordHintSpans(block)
      const traceparent = Option.getOrUndefined(yield* currentTraceparent)
      yield* publish(js, streams.blocks.subject, CHAIN_BLOCK_TYPE, blockBytes, number, traceparent)
      yield* publish(js, streams.hints.subject, CHAIN_HINT_TYPE, hintBytes, number, traceparent)
      yield* Effect.annotateCurrentSpan({
        "ira.block": number,
        "ira.transactions": txs.length,
        "ira.unique_keys": block.outcome.uniqueKeys,
        "ira.hint_keys": block.hint.storage.length,
        "ira.hint_bytes": block.hintFrame.length,
        "ira.hint_raw_bytes": block.rawHintBytes
      })
    }).pipe(Effect.withSpan("ira.chain.block", { kind: "producer" }))

    // The actor: presence (heartbeats, `reef status`) and the kernel's stats for the primary.
    yield* spawn(
      defineActor({
        role: CHAIN_ROLE,
        description: `Ira chain primary of ${options.chain}: blocks and hints on JetStream`,
        initialState: Effect.void,
        handlers: []
      }),
      options.id
    ).pipe(Effect.mapError(chainError("starting the actor")))

    const done = () => options.maxBlocks !== undefined && head >= options.maxBlocks
    const loop = Effect.gen(function* () {
      while (!done()) {
        const started = performance.now()
        yield* produce
        const rest = options.blockIntervalMs - (performance.now() - started)
        yield* rest > 0 ? Effect.sleep(`${rest} millis`) : Effect.yieldNow()
      }
    })
    yield* loop.pipe(
      Effect.tapError((error) => Effect.logError(`chain ${options.chain} stopped producing: ${error.message}`)),
      Effect.forkScoped
    )
    const presence = yield* PresenceDetails
    let rate = { blocks: head, atMs: performance.now(), perSecond: 0 }
    yield* presence.reportStatus(
      { role: CHAIN_ROLE, id: options.id },
      Effect.sync(() => {
        const now = performance.now()
        if (now - rate.atMs >= 2000)
          rate = { blocks: head, atMs: now, perSecond: (1000 * (head - rate.blocks)) / (now - rate.atMs) }
        return { chain: options.chain, head: String(head), "blocks/s": rate.perSecond.toFixed(1) }
      })
    )
    return { head: () => head, spec }
  })

/** The hint's construction and serialization, as children of the current block span (after the fact). */
const recordHintSpans = (block: PrimaryBlock) =>
  Effect.gen(function* () {
    const parent = yield* Effect.currentSpan.pipe(Effect.option)
    if (Option.isNone(parent)) return
    const tracer = yield* Effect.tracer
    const nowNs = msToNs(performance.timeOrigin + performance.now())
    const serializeStart = nowNs - msToNs(block.serializeMs)
    const constructStart = serializeStart - msToNs(block.constructMs)
    const construct = tracer.span("ira.hint.construct", parent, Context.empty(), [], constructStart, "internal")
    construct.attribute("ira.block", block.number)
    construct.attribute("ira.hint_keys", block.hint.storage.length)
    construct.attribute("ira.hint_raw_bytes", block.rawHintBytes)
    construct.end(serializeStart, Exit.void)
    const serialize = tracer.span("ira.hint.serialize", parent, Context.empty(), [], serializeStart, "internal")
    serialize.attribute("ira.block", block.number)
    serialize.attribute("ira.hint_bytes", block.hintFrame.length)
    serialize.end(nowNs, Exit.void)
  })

/** Publishes block `number`'s message with the condition that the stream holds exactly the blocks before it. */
const publish = (
  js: JetStreamClient,
  subject: string,
  type: string,
  bytes: Uint8Array,
  number: number,
  traceparent: string | undefined
) =>
  Effect.tryPromise({
    try: () => {
      const h = natsHeaders()
      h.set(TYPE_HEADER, type)
      if (traceparent !== undefined) h.set(TRACEPARENT_HEADER, traceparent)
      return js.publish(subject, bytes, { expect: { lastSequence: number - 1 }, headers: h })
    },
    catch: chainError(`publishing block ${number} on ${subject}`)
  }).pipe(Effect.retry(Schedule.exponential("50 millis").pipe(Schedule.compose(Schedule.recurs(6)))))

/** Publishes again the stored blocks `last + 1 .. head` (`what`: the block or its hint). */
const republish = (
  js: JetStreamClient,
  tables: StoreTables,
  subject: string,
  type: string,
  what: "block" | "hint",
  last: number,
  head: number
) =>
  Effect.gen(function* () {
    if (last > head) {
      return yield* new ChainError({
        reason: `${subject} holds ${last} blocks but the store only ${head}: they belong to different chains`
      })
    }
    for (let number = last + 1; number <= head; number++) {
      const record = readBlockRecord(tables, number)
      if (record === undefined) return yield* new ChainError({ reason: `block ${number} is missing from the store` })
      const bytes =
        what === "block" ? record.block : (record.hint ?? ChainHint.encode({ number, frame: Buffer.alloc(0) }).finish())
      yield* publish(js, subject, type, bytes, number, undefined)
    }
  })

const catchUpStreams = (
  js: JetStreamClient,
  tables: StoreTables,
  streams: ReturnType<typeof chainStreams>,
  head: number,
  lastBlock: () => Effect.Effect<number, ChainError>
) =>
  Effect.gen(function* () {
    const last = yield* lastBlock()
    yield* republish(js, tables, streams.blocks.subject, CHAIN_BLOCK_TYPE, "block", last, head)
  })

/** A chain's genesis description as its primary published it (for a backup building its own store). */
export const decodeChainInfo = (
  bytes: Uint8Array
): { readonly chain: string; readonly spec: ChainSpec; readonly primaryId: string } => {
  let info: ChainInfo
  try {
    info = decodeWhole(ChainInfo, bytes)
  } catch (cause) {
    throw new ChainSpecError({ detail: `the genesis info does not decode: ${(cause as Error).message}` })
  }
  return { chain: info.chain, spec: decodeChainSpec(info.genesisSpec), primaryId: info.primaryId }
}
