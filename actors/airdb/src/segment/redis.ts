/**
 * Segments on Redis (the paper's low-latency backend, §5.4): a segment is a list of records plus a marker
 * key that says it exists (an empty list does not exist in Redis). Every operation that must be atomic is a
 * Lua script, which Redis runs without interleaving: the conditional append checks existence, the expected
 * tail and the record limit, then pushes.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Redis, type RedisOptions } from "ioredis"
import { DEFAULT_CALL_TIMEOUT_MS, makeSegmentStore } from "./raw-store.js"
import { type SegmentLimits, SegmentStore, type SegmentStoreShape, SegmentUnavailable } from "./segment.js"

export interface RedisSegmentOptions {
  readonly host?: string
  readonly port: number
  /** Key prefix, so several stores can share one server. */
  readonly prefix?: string
  readonly timeoutMs?: number
  readonly maxRecords?: number
  readonly maxAppendBytes?: number
}

/** KEYS: marker, list. ARGV: expected tail, record limit, record. Returns {status, tail}. */
const APPEND_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local n = redis.call('LLEN', KEYS[2])
if n ~= tonumber(ARGV[1]) then return {-2, n} end
if n >= tonumber(ARGV[2]) then return {-3, n} end
redis.call('RPUSH', KEYS[2], ARGV[3])
return {0, n + 1}`

/** KEYS: marker, list. ARGV: first index, last index. Returns false for a missing segment. */
const READ_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('LRANGE', KEYS[2], ARGV[1], ARGV[2])`

/** KEYS: marker, list. Returns -1 for a missing segment. */
const SIZE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('LLEN', KEYS[2])`

interface SegmentCommands {
  airdbAppend(marker: string, list: string, expected: number, limit: number, record: Buffer): Promise<[number, number]>
  airdbReadBuffer(marker: string, list: string, first: number, last: number): Promise<Array<Buffer> | null>
  airdbSize(marker: string, list: string): Promise<number>
}

export const makeRedisSegmentStore = (redis: Redis, options: RedisSegmentOptions): SegmentStoreShape => {
  const prefix = options.prefix ?? "airdb"
  const limits: SegmentLimits = {
    maxAppendBytes: options.maxAppendBytes ?? 4 * 1024 * 1024,
    maxRecords: options.maxRecords ?? 1_000_000,
    maxPosition: options.maxRecords ?? 1_000_000,
    byteAddressed: false
  }
  redis.defineCommand("airdbAppend", { numberOfKeys: 2, lua: APPEND_SCRIPT })
  redis.defineCommand("airdbRead", { numberOfKeys: 2, lua: READ_SCRIPT })
  redis.defineCommand("airdbSize", { numberOfKeys: 2, lua: SIZE_SCRIPT })
  const commands = redis as unknown as SegmentCommands
  const marker = (segment: string) => `${prefix}:${segment}:created`
  const list = (segment: string) => `${prefix}:${segment}:records`

  return makeSegmentStore({
    backend: "redis",
    limits,
    timeoutMs: options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    raw: {
      create: async (segment) => (await redis.set(marker(segment), "1", "NX")) === "OK",
      append: async (segment, expectedTail, bytes) => {
        const record = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        const [status, tail] = await commands.airdbAppend(
          marker(segment),
          list(segment),
          expectedTail,
          limits.maxRecords,
          record
        )
        switch (status) {
          case 0:
            return { _tag: "Appended", result: { position: expectedTail, tail } }
          case -1:
            return { _tag: "NotFound" }
          case -2:
            return { _tag: "Conflict", actual: tail }
          default:
            return { _tag: "Full", tail }
        }
      },
      read: async (segment, from, maxRecords) => {
        const got = await commands.airdbReadBuffer(marker(segment), list(segment), from, from + maxRecords - 1)
        if (got === null) return { _tag: "NotFound" }
        return {
          _tag: "Records",
          records: got.map((bytes, i) => ({ position: from + i, next: from + i + 1, bytes: new Uint8Array(bytes) }))
        }
      },
      size: async (segment) => {
        const tail = await commands.airdbSize(marker(segment), list(segment))
        return tail < 0 ? { _tag: "NotFound" } : { _tag: "Size", tail }
      },
      remove: async (segment) => {
        await redis.del(marker(segment), list(segment))
      }
    }
  })
}

/** A Redis segment store over its own connection, closed with the scope. */
export const redisSegmentStore = (
  options: RedisSegmentOptions
): Effect.Effect<SegmentStoreShape, SegmentUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const redisOptions: RedisOptions = {
      host: options.host ?? "127.0.0.1",
      port: options.port,
      lazyConnect: true,
      // Calls fail fast while disconnected (the segment layer's caller retries), and reconnect forever.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(50 * attempt, 1000)
    }
    const redis = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const r = new Redis(redisOptions)
          // ioredis reports connection errors as events; the calls that fail because of them say why.
          r.on("error", () => {})
          await r.connect()
          return r
        },
        catch: (cause) =>
          new SegmentUnavailable({
            segment: "*",
            operation: `connect redis ${options.host ?? "127.0.0.1"}:${options.port}`,
            reason: String(cause)
          })
      }),
      (r) => Effect.promise(() => r.quit().catch(() => r.disconnect()))
    )
    return makeRedisSegmentStore(redis, options)
  })

export const redisSegmentLayer = (options: RedisSegmentOptions): Layer.Layer<SegmentStore, SegmentUnavailable> =>
  Layer.scoped(SegmentStore, redisSegmentStore(options))
