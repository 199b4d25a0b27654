/** A throw-away Azurite blob service (the npm package, run with this Node) for tests and benchmarks. */
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServerProcess } from "@reef/devkit"
import * as Effect from "effect/Effect"

const azuriteBlobMain = (): string => createRequire(import.meta.url).resolve("azurite/dist/src/blob/main.js")

/** In memory by default (`inMemory: false` keeps blobs in a temporary directory, removed with the scope). */
export const startAzurite = (options: { readonly inMemory?: boolean } = {}) =>
  Effect.gen(function* () {
    const location = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "reef-azurite-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    return yield* startServerProcess({
      name: "azurite-blob",
      command: process.execPath,
      args: (port) => [
        azuriteBlobMain(),
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        String(port),
        ...(options.inMemory === false ? ["--location", location] : ["--inMemoryPersistence"]),
        "--skipApiVersionCheck",
        "--disableProductStyleUrl",
        "--silent"
      ],
      ready: /successfully listens/,
      cwd: location
    })
  })
