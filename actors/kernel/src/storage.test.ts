import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { afterAll, describe, expect, it } from "vitest"
import { lmdbStorageLayer, memoryStorageLayer, Storage, type StorageError } from "./storage.js"

const dir = mkdtempSync(join(tmpdir(), "reef-storage-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const bytes = (s: string) => new TextEncoder().encode(s)

const contract = (name: string, layer: () => Layer.Layer<Storage, StorageError>) =>
  describe(name, () => {
    it("puts, gets, ranges in key order and removes", async () => {
      const result = await Effect.gen(function* () {
        const storage = yield* Storage
        yield* storage.put("b", bytes("2"))
        yield* storage.put("a", bytes("1"))
        yield* storage.put("c", bytes("3"))
        const a = yield* storage.get("a")
        const range = yield* storage.range("a", "c")
        yield* storage.remove("a")
        const gone = yield* storage.get("a")
        return { a, keys: range.map(([k]) => k), gone }
      }).pipe(Effect.provide(layer()), Effect.runPromise)
      expect(result.a).toEqual(bytes("1"))
      expect(result.keys).toEqual(["a", "b"])
      expect(result.gone).toBeUndefined()
    })
  })

contract("memory storage", () => memoryStorageLayer)
contract("lmdb storage", () => lmdbStorageLayer(join(dir, "db1")))

describe("lmdb storage durability", () => {
  it("keeps data across close and reopen", async () => {
    const path = join(dir, "db2")
    await Effect.flatMap(Storage, (s) => s.put("k", bytes("v"))).pipe(
      Effect.provide(lmdbStorageLayer(path)),
      Effect.runPromise
    )
    const value = await Effect.flatMap(Storage, (s) => s.get("k")).pipe(
      Effect.provide(lmdbStorageLayer(path)),
      Effect.runPromise
    )
    expect(value).toEqual(bytes("v"))
  })
})
