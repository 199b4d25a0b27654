/**
 * One SLSMR server of the benchmark (the paper's shared-log SMR baseline): it replays the same log into
 * memory (loading every snapshot block, then the command tail) and serves reef.v1.AirDB to remote clients.
 * Prints one JSON line once it serves, then runs until killed.
 *
 *   node bench/dist/airdb/server-process.js '<json>'
 */
import { type StorageOptions, serveAirDb } from "@reef/airdb"
import * as Effect from "effect/Effect"

const spec = JSON.parse(process.argv[2] ?? "{}") as {
  readonly storage: StorageOptions
  readonly store: string
  readonly id: string
  readonly spawnedAt?: number
}

Effect.runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* serveAirDb({
        storage: spec.storage,
        store: spec.store,
        clientId: `${spec.id}-${process.pid}`,
        grpcPort: 0,
        mode: "slsmr"
      })
      process.stdout.write(
        `${JSON.stringify({ ready: true, address: handle.grpcAddress, loadMs: handle.coldStartMs, stats: handle.client.stats() })}\n`
      )
      return yield* Effect.never
    })
  )
).catch((e) => {
  console.error(e instanceof Error ? e.stack : e)
  process.exit(1)
})
