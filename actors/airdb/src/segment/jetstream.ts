/**
 * Segments on NATS JetStream (nats-server 2.9): one stream per segment, one message per record, a record's
 * position being its sequence minus one. An append is a publish with the expected-last-sequence condition
 * (the server refuses it when another record got there first); reads are direct gets by sequence
 * (`allow_direct`), issued together for a range. The stream discards new messages past `maxRecords`.
 *
 * On a NATS cluster a segment may be replicated (`replicas`, JetStream's R3): then a direct get can be answered
 * by any replica, a follower that has not applied the latest appends yet, and a read would miss records the
 * writer already saw acknowledged. Replicated segments are read through the stream leader's message-get API
 * instead, which answers from the state the appends were acknowledged by.
 */
import {
  DiscardPolicy,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType
} from "@nats-io/jetstream"
import { NoRespondersError } from "@nats-io/nats-core"
import { connect } from "@nats-io/transport-node"
import { natsConnectOptions } from "@reef/kernel/nats-security"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { DEFAULT_CALL_TIMEOUT_MS, makeSegmentStore, type RawRead } from "./raw-store.js"
import { type SegmentLimits, SegmentStore, type SegmentStoreShape, SegmentUnavailable } from "./segment.js"

export interface JetStreamSegmentOptions {
  readonly servers: string
  /** Prefix of stream names and subjects, so several stores can share one server. */
  readonly prefix?: string
  readonly timeoutMs?: number
  /** Records per segment (default 1,000,000). */
  readonly maxRecords?: number
  /** nats-server's max_payload is 1 MiB by default; a record leaves room for the headers. */
  readonly maxAppendBytes?: number
  /** Direct gets in flight for one read. */
  readonly readConcurrency?: number
  /** "file" (default, durable) or "memory". */
  readonly storage?: "file" | "memory"
  /** Copies of each segment on a NATS cluster (1 by default; 3 survives a server's loss). */
  readonly replicas?: number
}

/** Direct gets of a read's first window. */
const FIRST_READ_WINDOW = 4
const API_WRONG_LAST_SEQUENCE = 10071
const API_STREAM_NOT_FOUND = 10059
/** nats-server's code for "maximum messages exceeded" under the discard-new policy. */
const API_STREAM_STORE_FAILED = 10077
/** nats-server's error text has the current last sequence: "wrong last sequence: 5". */
const LAST_SEQUENCE_IN_MESSAGE = /wrong last sequence: (\d+)/

const apiCode = (e: unknown): number | undefined => (e instanceof JetStreamApiError ? e.code : undefined)

/** A publish to a subject no stream listens on: nats.js wraps the no-responders error in one or two causes. */
const isNoResponders = (e: unknown): boolean => {
  for (let cause = e, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    if (cause instanceof NoRespondersError) return true
  }
  return false
}

export const makeJetStreamSegmentStore = (
  jsm: JetStreamManager,
  js: JetStreamClient,
  options: JetStreamSegmentOptions
): SegmentStoreShape => {
  const prefix = options.prefix ?? "airdb"
  const limits: SegmentLimits = {
    maxAppendBytes: options.maxAppendBytes ?? 1024 * 1024 - 4 * 1024,
    maxRecords: options.maxRecords ?? 1_000_000,
    maxPosition: options.maxRecords ?? 1_000_000,
    byteAddressed: false
  }
  const readConcurrency = options.readConcurrency ?? 64
  const stream = (segment: string) => `${prefix}_${segment}`
  const subject = (segment: string) => `${prefix}.${segment}`
  const timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS

  /** The stream's direct-get setting, or undefined when it does not exist. */
  const lookup = async (segment: string): Promise<{ readonly direct: boolean } | undefined> => {
    try {
      const info = await jsm.streams.info(stream(segment))
      return { direct: info.config.allow_direct === true }
    } catch (e) {
      if (apiCode(e) === API_STREAM_NOT_FOUND) return undefined
      throw e
    }
  }
  const exists = async (segment: string): Promise<boolean> => (await lookup(segment)) !== undefined

  const replicas = options.replicas ?? 1
  /** Direct gets where the stream allows them (its creator's choice, whatever this client's `replicas`). */
  const getRecord = async (segment: string, position: number, direct: boolean) => {
    const msg = direct
      ? await jsm.direct.getMessage(stream(segment), { seq: position + 1 })
      : await jsm.streams.getMessage(stream(segment), { seq: position + 1 })
    return msg === null ? undefined : { position, next: position + 1, bytes: msg.data }
  }

  /**
   * Streams this client has seen exist, and whether they allow direct gets. A direct get on a missing stream
   * is not answered (it times out) and a missing sequence answers "not found" like any sequence of a missing
   * stream: ask the stream itself once, then trust the gets.
   */
  const known = new Map<string, boolean>()
  /** First reads of a segment in flight share one stream lookup. */
  const asking = new Map<string, Promise<{ readonly direct: boolean } | undefined>>()
  const ask = (segment: string) => {
    let answer = asking.get(segment)
    if (answer === undefined) {
      answer = lookup(segment).finally(() => asking.delete(segment))
      asking.set(segment, answer)
    }
    return answer
  }

  const read = async (segment: string, from: number, maxRecords: number): Promise<RawRead> => {
    let direct = known.get(segment)
    if (direct === undefined) {
      const found = await ask(segment)
      if (found === undefined) return { _tag: "NotFound" }
      direct = found.direct
      known.set(segment, direct)
    }
    const records = []
    let position = from
    while (records.length < maxRecords) {
      // A read at the tail (a state log sync) finds nothing: the first window is small, so it costs a few
      // gets, not a full window of misses.
      const window = Math.min(records.length === 0 ? FIRST_READ_WINDOW : readConcurrency, maxRecords - records.length)
      const got = await Promise.all(Array.from({ length: window }, (_, i) => getRecord(segment, position + i, direct)))
      const firstMissing = got.indexOf(undefined)
      for (const r of firstMissing < 0 ? got : got.slice(0, firstMissing)) records.push(r!)
      if (firstMissing >= 0) break
      position += window
    }
    return { _tag: "Records", records }
  }

  return makeSegmentStore({
    backend: "jetstream",
    limits,
    timeoutMs,
    raw: {
      create: async (segment) => {
        if (await exists(segment)) return false
        await jsm.streams.add({
          name: stream(segment),
          subjects: [subject(segment)],
          storage: options.storage === "memory" ? StorageType.Memory : StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.New,
          max_msgs: limits.maxRecords,
          // A message's size includes its headers (the expected-sequence condition): leave them room.
          max_msg_size: limits.maxAppendBytes + 4 * 1024,
          allow_direct: replicas === 1,
          num_replicas: replicas
        })
        return true
      },
      append: async (segment, expectedTail, bytes) => {
        try {
          const ack = await js.publish(subject(segment), bytes, {
            expect: { lastSequence: expectedTail },
            timeout: timeoutMs
          })
          return { _tag: "Appended", result: { position: ack.seq - 1, tail: ack.seq } }
        } catch (e) {
          const code = apiCode(e)
          if (code === API_WRONG_LAST_SEQUENCE) {
            const m = LAST_SEQUENCE_IN_MESSAGE.exec((e as Error).message)
            return { _tag: "Conflict", actual: m === null ? undefined : Number(m[1]) }
          }
          if (code === API_STREAM_STORE_FAILED) return { _tag: "Full", tail: expectedTail }
          if (isNoResponders(e)) return { _tag: "NotFound" }
          throw e
        }
      },
      read: (segment, from, maxRecords) => read(segment, from, maxRecords),
      size: async (segment) => {
        try {
          const info = await jsm.streams.info(stream(segment))
          return { _tag: "Size", tail: info.state.last_seq }
        } catch (e) {
          if (apiCode(e) === API_STREAM_NOT_FOUND) return { _tag: "NotFound" }
          throw e
        }
      },
      remove: async (segment) => {
        known.delete(segment)
        try {
          await jsm.streams.delete(stream(segment))
        } catch (e) {
          if (apiCode(e) !== API_STREAM_NOT_FOUND) throw e
        }
      }
    }
  })
}

/** A JetStream segment store over its own NATS connection, closed with the scope. */
export const jetStreamSegmentStore = (
  options: JetStreamSegmentOptions
): Effect.Effect<SegmentStoreShape, SegmentUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const nc = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          connect(
            natsConnectOptions({
              servers: options.servers,
              name: "reef-airdb-segments",
              maxReconnectAttempts: -1,
              reconnectTimeWait: 250,
              timeout: 2000,
              noAsyncTraces: true
            })
          ),
        catch: (cause) =>
          new SegmentUnavailable({ segment: "*", operation: `connect ${options.servers}`, reason: String(cause) })
      }),
      (nc) => Effect.promise(() => nc.drain().catch(() => nc.close()))
    )
    const jsm = yield* Effect.tryPromise({
      try: () => jetstreamManager(nc),
      catch: (cause) =>
        new SegmentUnavailable({ segment: "*", operation: "jetstream", reason: `JetStream not enabled? ${cause}` })
    })
    return makeJetStreamSegmentStore(jsm, jetstream(nc), options)
  })

export const jetStreamSegmentLayer = (
  options: JetStreamSegmentOptions
): Layer.Layer<SegmentStore, SegmentUnavailable> => Layer.scoped(SegmentStore, jetStreamSegmentStore(options))
