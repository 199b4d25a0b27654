/**
 * The Storage service: an ordered byte-keyed store for roles whose paper has a disk. Two layers: LMDB on
 * disk (real, durable) and an in-memory map (for deterministic tests and simulation).
 */

import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { RootDatabase } from "lmdb"

export class StorageError extends Data.TaggedError("StorageError")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message() {
    return `storage ${this.operation} failed: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

export interface StorageShape {
  readonly get: (key: string) => Effect.Effect<Uint8Array | undefined, StorageError>
  readonly put: (key: string, value: Uint8Array) => Effect.Effect<void, StorageError>
  readonly remove: (key: string) => Effect.Effect<void, StorageError>
  /** Entries with `start <= key < end` in key order, at most `limit`. */
  readonly range: (
    start: string,
    end: string,
    limit?: number
  ) => Effect.Effect<ReadonlyArray<readonly [string, Uint8Array]>, StorageError>
}

export class Storage extends Context.Tag("@reef/kernel/Storage")<Storage, StorageShape>() {}

const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const memoryStorageLayer: Layer.Layer<Storage> = Layer.sync(Storage, () => {
  const entries = new Map<string, Uint8Array>()
  return Storage.of({
    get: (key) => Effect.sync(() => entries.get(key)),
    put: (key, value) => Effect.sync(() => void entries.set(key, Uint8Array.from(value))),
    remove: (key) => Effect.sync(() => void entries.delete(key)),
    range: (start, end, limit = Number.POSITIVE_INFINITY) =>
      Effect.sync(() =>
        [...entries.keys()]
          .filter((k) => k >= start && k < end)
          .sort(compareKeys)
          .slice(0, limit)
          .map((k) => [k, entries.get(k)!] as const)
      )
  })
})

/** LMDB at `path` (a directory); writes are durable when their Effect completes. */
export const lmdbStorageLayer = (path: string): Layer.Layer<Storage, StorageError> =>
  Layer.scoped(
    Storage,
    Effect.gen(function* () {
      // Loaded on first use: the native module is only paid for by processes that keep data on disk.
      const db: RootDatabase<Buffer, string> = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => import("lmdb").then(({ open }) => open<Buffer, string>({ path, encoding: "binary" })),
          catch: (cause) => new StorageError({ operation: `open ${path}`, cause })
        }),
        (db) => Effect.promise(() => db.close())
      )
      const attempt = <A>(operation: string, f: () => Promise<A> | A) =>
        Effect.tryPromise({ try: async () => f(), catch: (cause) => new StorageError({ operation, cause }) })
      return Storage.of({
        get: (key) =>
          attempt(`get ${key}`, () => {
            const value = db.getBinary(key)
            return value === undefined ? undefined : new Uint8Array(value)
          }),
        put: (key, value) => attempt(`put ${key}`, () => db.put(key, Buffer.from(value)).then(() => undefined)),
        remove: (key) => attempt(`remove ${key}`, () => db.remove(key).then(() => undefined)),
        range: (start, end, limit) =>
          attempt(`range ${start}..${end}`, () =>
            [...db.getRange({ start, end, ...(limit === undefined ? {} : { limit }) })].map(
              ({ key, value }) => [key, new Uint8Array(value)] as const
            )
          )
      })
    })
  )
