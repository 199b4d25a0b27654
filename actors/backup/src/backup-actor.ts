/**
 * The `backup` actor (Ira's backup, §4.2): follows a chain primary's block and hint streams from its own
 * head + 1, replays the blocks with hint-based prefetch (replay/replayer.ts) and commits each verified block
 * to its own store. A restarted backup resumes from what it committed; one started late catches up from the
 * streams; one started from a copy of the primary's store begins at that copy's head.
 *
 * Serves reef.v1.Backup over gRPC: Status (head, lag, speed, last verified hash) and WatchReplay (a stream of
 * per-block timings). A block whose state hash differs from the primary's, with and without its hint, stops
 * the replay: the backup logs it, reports DIVERGED, and keeps answering Status.
 *
 * Traces: `ira.backup.batch` spans with `ira.prefetch`, `ira.wait` and `ira.execute` children, and an
 * `ira.backup.block` span per block linked to the primary's `ira.chain.block` span (from the message's
 * traceparent header).
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import {
  ChainContext,
  chainStreams,
  decodeChainInfo,
  encodeChainSpec,
  GENESIS_INFO_KEY,
  lastBlockOf,
  openTables,
  readGenesis,
  readHead,
  streamConnection,
  writeGenesis
} from "@reef/chain"
import { grpcService, serveGrpc } from "@reef/grpc"
import { defineActor, type Kernel, KernelConfig, type Nats, PresenceDetails, spawn } from "@reef/kernel"
import { MessagingTracing, parentSpanFromTraceparent } from "@reef/observability/tracing"
import { BackupService, BackupState, type BackupStatus, type BlockReplayed, descriptorSetPath } from "@reef/proto"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import { BackupTelemetry } from "./backup-telemetry.js"
import { defaultFollowerParams, type FollowerState } from "./core/follower.js"
import { type BatchReplay, type BlockReplay, follow, type Offer } from "./replay/replayer.js"
import { jetStreamSource } from "./stream-source.js"

export const BACKUP_ROLE = "backup"

export class BackupError extends Data.TaggedError("BackupError")<{
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message() {
    return `backup: ${this.reason}${this.cause === undefined ? "" : `: ${String((this.cause as Error)?.message ?? this.cause)}`}`
  }
}

export interface BackupOptions {
  readonly id: string
  /** NATS server (JetStream enabled): the actor opens a connection of its own for the streams. */
  readonly natsUrl: string
  /** The chain to follow (its primary's streams). */
  readonly chain: string
  /** The backup's own store (a directory). */
  readonly dbPath: string
  /** Start from a copy of this store (e.g. the primary's, stopped) instead of building the genesis. */
  readonly fromCopy?: string
  readonly readers: number
  readonly batchBlocks: number
  readonly grpcPort: number
  readonly grpcHost?: string
  /** How long a block waits for its hint before it is replayed without one. */
  readonly hintWaitMs?: number
  /** Replay without hints (the baseline path, for comparison). */
  readonly ignoreHints?: boolean
  /** Emulated remote-disk delay per store seek, µs (a what-if: replay/remote-disk.ts). */
  readonly latencyUs?: number
  readonly durable?: boolean
}

export interface BackupHandle {
  readonly grpcAddress: string
  readonly status: Effect.Effect<BackupStatus>
}

const backupError = (reason: string) => (cause: unknown) => new BackupError({ reason, cause })

/** Replay records kept for WatchReplay's `from_block`. */
const RECENT_RECORDS = 1024
const msToNs = (ms: number) => BigInt(Math.round(ms * 1e6))

/** Opens the backup's store: from a copy, or with the chain's genesis (read from the chain's info bucket). */
const openStore = (options: BackupOptions, nc: Context.Tag.Service<typeof Nats>, infoBucket: string) =>
  Effect.gen(function* () {
    const dataFile = join(options.dbPath, "data.mdb")
    if (options.fromCopy !== undefined && !existsSync(dataFile)) {
      // LMDB's own copy (mdb_env_copy) inside a read transaction: consistent even while the primary writes.
      yield* Effect.tryPromise({
        try: async () => {
          mkdirSync(options.dbPath, { recursive: true })
          const source = openTables({ path: options.fromCopy!, readOnly: true })
          try {
            await source.env.backup(options.dbPath, false)
          } finally {
            await source.env.close()
          }
        },
        catch: backupError(`copying the store at ${options.fromCopy}`)
      })
    }
    const info = yield* Effect.tryPromise({
      try: async () => {
        const kv = await new Kvm(nc).open(infoBucket)
        const entry = await kv.get(GENESIS_INFO_KEY)
        if (entry === null || entry.value.length === 0) throw new Error("no genesis published yet")
        return decodeChainInfo(entry.value)
      },
      catch: backupError(`reading the chain's genesis from ${infoBucket}`)
    }).pipe(Effect.retry(Schedule.spaced("500 millis").pipe(Schedule.compose(Schedule.recurs(60)))))
    return yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const tables = openTables({ path: options.dbPath, durable: options.durable ?? true })
          const stored = readGenesis(tables)
          if (stored === undefined) writeGenesis(tables, info.spec)
          else if (stored.toString() !== encodeChainSpec(info.spec).toString()) {
            void tables.env.close()
            throw new Error(`store ${options.dbPath} holds another chain's genesis`)
          }
          return { tables, info }
        },
        catch: backupError("opening the store")
      }),
      ({ tables }) => Effect.promise(() => tables.env.close())
    )
  })

export const runBackup = (options: BackupOptions): Effect.Effect<BackupHandle, BackupError, Kernel | Scope.Scope> =>
  Effect.gen(function* () {
    const config = yield* KernelConfig
    // A connection of its own (JetStream), closed with the actor's scope.
    const nc = yield* streamConnection(options.natsUrl, `reef-${options.id}-jetstream`).pipe(
      Effect.mapError(backupError(`connecting to ${options.natsUrl}`))
    )
    const tracing = yield* MessagingTracing
    const streams = chainStreams(config.cluster, options.chain)
    const { tables, info } = yield* openStore(options, nc, streams.info)
    const context = new ChainContext(info.spec.seed, info.spec.users)
    const jsm = yield* Effect.tryPromise({
      try: () => jetstreamManager(nc),
      catch: backupError("JetStream not enabled?")
    })
    const js = jetstream(nc)

    const startHead = readHead(tables)
    const status = {
      state: BackupState.BACKUP_STATE_CATCHING_UP,
      head: startHead,
      primaryHead: startHead,
      lastHash: Buffer.alloc(0) as Buffer,
      hintErrors: 0,
      hintsRejected: 0,
      misses: 0,
      divergence: "",
      rate: 0,
      rateSince: performance.now(),
      rateBlocks: 0
    }
    const spansOf = new Map<number, string | undefined>()
    const replayed = yield* PubSub.sliding<BlockReplayed>(RECENT_RECORDS)
    const telemetry = new BackupTelemetry(options.chain, options.id)
    // Spans recorded from the replay's callbacks go to this actor's tracer (the runtime it was started in).
    const runSync = Runtime.runSync(yield* Effect.runtime<never>())
    const recent: Array<BlockReplayed> = []
    /** The follower's inputs, once it runs (the primary's head goes there too). */
    let offerToFollower: Offer | undefined

    const onState = (state: FollowerState) => {
      status.primaryHead = Math.max(status.primaryHead, state.primaryHead)
      if (state.phase === "following") status.state = BackupState.BACKUP_STATE_FOLLOWING
    }
    const onBlock = (record: BlockReplay) => {
      status.head = record.number
      status.lastHash = record.stateHash
      status.misses += record.misses
      if (record.hintError !== undefined) status.hintErrors++
      if (record.hintRejected) status.hintsRejected++
      status.rateBlocks++
      const elapsed = performance.now() - status.rateSince
      if (elapsed >= 2000) {
        status.rate = (1000 * status.rateBlocks) / elapsed
        status.rateSince = performance.now()
        status.rateBlocks = 0
      }
      telemetry.onBlock(record, record.lag)
      const message: BlockReplayed = {
        number: record.number,
        waitMs: record.waitMs,
        execMs: record.execMs,
        hintedKeys: record.hintedKeys,
        cacheHits: record.hits,
        cacheMisses: record.misses,
        hintError: record.hintError ?? "",
        hintRejected: record.hintRejected,
        stateHash: record.stateHash,
        lagBlocks: record.lag
      }
      recent.push(message)
      if (recent.length > RECENT_RECORDS) recent.shift()
      runSync(PubSub.publish(replayed, message))
      const traceparent = spansOf.get(record.number)
      spansOf.delete(record.number)
      if (tracing) {
        runSync(recordBlockSpan(record, traceparent))
        batchProgress(record)
      }
    }
    /** Batches prefetched, with the start of their first block and their misses, until their last block. */
    const batches = new Map<number, { readonly prefetch: BatchReplay; executeStart: number; misses: number }>()
    const onBatch = (batch: BatchReplay) => {
      if (tracing) batches.set(batch.batch, { prefetch: batch, executeStart: 0, misses: 0 })
    }
    const batchProgress = (record: BlockReplay) => {
      const batch = batches.get(record.batch)
      if (batch === undefined) return
      if (record.number === batch.prefetch.firstBlock) batch.executeStart = record.finishedAt - record.execMs
      batch.misses += record.misses
      if (record.number === batch.prefetch.lastBlock) {
        batches.delete(record.batch)
        runSync(recordBatchSpan(batch.prefetch, batch.executeStart, record.finishedAt, batch.misses))
      }
    }

    // ---- the replay: the follower core over the streams, until a block diverges ----------------------------
    const useHints = !options.ignoreHints
    const streamSource = jetStreamSource({
      js,
      streams,
      useHints,
      onTraceparent: (block, traceparent) => {
        spansOf.set(block, traceparent)
      }
    })
    const params = defaultFollowerParams({
      batchBlocks: options.batchBlocks,
      readers: options.readers,
      useHints,
      ...(options.hintWaitMs === undefined ? {} : { hintWaitMs: options.hintWaitMs })
    })
    yield* follow(
      {
        tables,
        chain: context,
        params,
        head: startHead,
        ...(options.latencyUs === undefined ? {} : { latencyUs: options.latencyUs })
      },
      (offer) => {
        offerToFollower = offer
        return streamSource(offer)
      },
      { onBlock, onBatch, onState }
    ).pipe(
      Effect.catchTag("BackupDivergedError", (error) =>
        Effect.gen(function* () {
          status.state = BackupState.BACKUP_STATE_DIVERGED
          status.divergence = error.message
          yield* Effect.logError(`${error.message}: replay stopped`)
        })
      ),
      Effect.tapErrorCause((cause) => Effect.logError("backup replay failed", cause)),
      Effect.forkScoped
    )

    // ---- the primary's head, for lag ------------------------------------------------------------------------
    yield* Effect.tryPromise(() => lastBlockOf(jsm, streams.blocks.stream)).pipe(
      Effect.tap((last) =>
        Effect.sync(() => {
          status.primaryHead = Math.max(status.primaryHead, last)
          offerToFollower?.({ _tag: "PrimaryHead", head: last })
          telemetry.onPrimaryHead(Math.max(0, status.primaryHead - status.head))
        })
      ),
      Effect.ignore,
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.forkScoped
    )

    const statusResponse = Effect.sync(
      (): BackupStatus => ({
        id: options.id,
        chain: options.chain,
        state: status.state,
        headBlock: status.head,
        primaryHead: status.primaryHead,
        lagBlocks: Math.max(0, status.primaryHead - status.head),
        blocksPerSecond: status.rate,
        lastVerifiedHash: status.lastHash,
        readers: options.readers,
        batchBlocks: options.batchBlocks,
        hintErrors: status.hintErrors,
        hintsRejected: status.hintsRejected,
        cacheMisses: status.misses,
        divergence: status.divergence
      })
    )

    const server = yield* serveGrpc({
      port: options.grpcPort,
      ...(options.grpcHost === undefined ? {} : { host: options.grpcHost }),
      services: [
        grpcService(BackupService, {
          status: () => statusResponse,
          watchReplay: (request) =>
            Stream.unwrapScoped(
              Effect.gen(function* () {
                const live = yield* PubSub.subscribe(replayed)
                const from = Number(request.fromBlock)
                const past = from === 0 ? [] : recent.filter((r) => r.number >= from)
                const last = past.length === 0 ? 0 : past[past.length - 1]!.number
                return Stream.concat(
                  Stream.fromIterable(past),
                  Stream.fromQueue(live).pipe(Stream.filter((r) => r.number > last))
                )
              })
            )
        })
      ],
      reflection: { descriptorSet: descriptorSetPath, protoFiles: ["reef/v1/backup.proto"] }
    }).pipe(Effect.mapError(backupError("serving gRPC")))

    yield* spawn(
      defineActor({
        role: BACKUP_ROLE,
        description: `Ira backup of ${options.chain}: hint-based replay, reef.v1.Backup on ${server.address}`,
        initialState: Effect.void,
        handlers: []
      }),
      options.id
    ).pipe(Effect.mapError(backupError("starting the actor")))

    // Presence: the gRPC endpoint (reef backup status finds it there) and the status `reef status` shows.
    const presence = yield* PresenceDetails
    const self = { role: BACKUP_ROLE, id: options.id }
    yield* presence.announce({ grpc: server.address }, self)
    yield* presence.reportStatus(
      self,
      Effect.map(statusResponse, (s) => ({
        chain: s.chain,
        head: String(s.headBlock),
        lag: String(s.lagBlocks),
        "blocks/s": s.blocksPerSecond.toFixed(1),
        state: STATE_NAMES[s.state] ?? "unknown"
      }))
    )

    return { grpcAddress: server.address, status: statusResponse }
  })

const STATE_NAMES: Readonly<Record<number, string>> = {
  [BackupState.BACKUP_STATE_CATCHING_UP]: "catching-up",
  [BackupState.BACKUP_STATE_FOLLOWING]: "following",
  [BackupState.BACKUP_STATE_DIVERGED]: "DIVERGED"
}

/** `ira.backup.block`, linked to the primary's block span when the block carried its context. */
const recordBlockSpan = (record: BlockReplay, traceparent: string | undefined) =>
  Effect.gen(function* () {
    const tracer = yield* Effect.tracer
    const endNs = msToNs(performance.timeOrigin + record.finishedAt)
    const startNs = endNs - msToNs(record.execMs + record.waitMs)
    const links: Array<Tracer.SpanLink> = Option.match(parentSpanFromTraceparent(traceparent), {
      onNone: () => [],
      onSome: (span) => [{ _tag: "SpanLink", span, attributes: { "ira.link": "primary block" } }]
    })
    const span = tracer.span("ira.backup.block", Option.none(), Context.empty(), links, startNs, "consumer")
    span.attribute("ira.block", record.number)
    span.attribute("ira.wait_ms", record.waitMs)
    span.attribute("ira.exec_ms", record.execMs)
    span.attribute("ira.hinted_keys", record.hintedKeys)
    span.attribute("ira.cache_hits", record.hits)
    span.attribute("ira.cache_misses", record.misses)
    span.attribute("ira.hint_rejected", record.hintRejected)
    if (record.hintError !== undefined) span.attribute("ira.hint_error", record.hintError)
    span.end(endNs, Exit.void)
  })

/**
 * `ira.backup.batch` from its prefetch's start to its last block's end, with children `ira.prefetch` (keys
 * by source, bytes read), `ira.wait` (the executor stalled on it) and `ira.execute` (its blocks).
 */
const recordBatchSpan = (batch: BatchReplay, executeStart: number, executeEnd: number, misses: number) =>
  Effect.gen(function* () {
    const tracer = yield* Effect.tracer
    const ns = (ms: number) => msToNs(performance.timeOrigin + ms)
    const span = tracer.span(
      "ira.backup.batch",
      Option.none(),
      Context.empty(),
      [],
      ns(batch.prefetchStart),
      "internal"
    )
    span.attribute("ira.batch", batch.batch)
    span.attribute("ira.first_block", batch.firstBlock)
    span.attribute("ira.last_block", batch.lastBlock)
    const child = (name: string, start: number, end: number, attributes: Record<string, unknown>) => {
      const c = tracer.span(name, Option.some(span), Context.empty(), [], ns(start), "internal")
      for (const [key, value] of Object.entries(attributes)) c.attribute(key, value)
      c.end(ns(Math.max(start, end)), Exit.void)
    }
    child("ira.prefetch", batch.prefetchStart, batch.prefetchEnd, {
      "ira.keys.plain": batch.plan.plain,
      "ira.keys.zero": batch.plan.zero,
      "ira.keys.changeset": batch.plan.changeset,
      "ira.code_entries": batch.codeEntries,
      "ira.bytes_read": batch.stats.bytesRead,
      "ira.slowest_reader_ms": batch.slowestReaderMs
    })
    child("ira.wait", Math.min(batch.prefetchEnd, executeStart), executeStart, {})
    child("ira.execute", executeStart, executeEnd, {
      "ira.blocks": batch.lastBlock - batch.firstBlock + 1,
      "ira.cache_misses": misses
    })
    span.end(ns(executeEnd), Exit.void)
  })
