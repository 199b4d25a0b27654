import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defaultWorkload, openTables, readHead, runChain, type StoreTables } from "@reef/chain"
import { natsKernelLayer, startNatsServer } from "@reef/kernel"
import { makeObservabilityTest, TestSpans } from "@reef/observability"
import { BackupState } from "@reef/proto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runBackup } from "./backup-actor.js"
import { backupStatus } from "./client.js"

const dir = mkdtempSync(join(tmpdir(), "reef-backup-actor-"))
const root = Effect.runSync(Scope.make())
let natsUrl = ""
/** One in-memory tracer for every actor of the test (chain and backups), so links across them can be checked. */
let tracing: Context.Context<TestSpans>
let tracer: Tracer.Tracer
const CLUSTER = "ira-test"
const workload = { ...defaultWorkload(21), txsMedian: 30 }

beforeAll(async () => {
  const server = await Effect.runPromise(Scope.extend(startNatsServer({ jetstream: true }), root))
  natsUrl = server.url
  // A runtime keeps the layer's tracer (set on the runtime, not in its context).
  const observability = await Effect.runPromise(Scope.extend(Layer.toRuntime(makeObservabilityTest()), root))
  tracing = observability.context
  tracer = Runtime.runSync(observability)(Effect.tracer)
}, 60_000)
afterAll(async () => {
  await Effect.runPromise(Scope.close(root, Exit.void))
  rmSync(dir, { recursive: true, force: true })
})

/**
 * Runs `effect` with a kernel of its own on the test server, in a scope of its own (closed by `close`). The
 * kernel is built into that scope: `Effect.provide` of a layer would close its connection on return.
 */
const start = async <A, E>(name: string, effect: Effect.Effect<A, E, any>) => {
  const scope = Effect.runSync(Scope.make())
  const layer = natsKernelLayer({ servers: natsUrl, name }, { cluster: CLUSTER }) as Layer.Layer<any, any, never>
  const value = await Effect.runPromise(
    Effect.gen(function* () {
      const context = yield* Layer.buildWithScope(layer, scope)
      return yield* Scope.extend(
        Effect.provide(Effect.withTracer(effect, tracer), Context.merge(context, tracing)),
        scope
      )
    }) as Effect.Effect<A, E, never>
  )
  return { value, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const statusOf = (address: string) => Effect.runPromise(backupStatus(address))

const until = (condition: () => Promise<boolean>, what: string) =>
  Effect.runPromise(
    Effect.tryPromise(condition).pipe(
      Effect.filterOrFail(
        (ok) => ok,
        () => new Error(`still waiting: ${what}`)
      ),
      Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.compose(Schedule.recurs(600))))
    )
  )

const plainOf = (tables: StoreTables) =>
  [...tables.plain.getRange({})].map(({ key, value }) => `${key.toString("hex")}=${value.toString("hex")}`)

describe("a backup following a chain primary over NATS JetStream", () => {
  it("replays every block with hints, survives a restart, starts from a store copy, ends on the primary's state", async () => {
    const primaryDb = join(dir, "primary")
    const backupDb = join(dir, "backup")
    const chainOptions = {
      id: "p1",
      natsUrl,
      chain: "main",
      dbPath: primaryDb,
      scale: "test" as const,
      seed: 3,
      workload,
      blockIntervalMs: 0,
      maxBlocks: 80,
      durable: false
    }
    let chain = await start("chain", runChain(chainOptions))
    const backupOptions = {
      natsUrl,
      id: "b1",
      chain: "main",
      dbPath: backupDb,
      readers: 3,
      batchBlocks: 8,
      grpcPort: 0,
      durable: false
    }
    let backup = await start("backup", runBackup(backupOptions))
    await until(async () => (await statusOf(backup.value.grpcAddress)).headBlock >= 30, "backup at block 30")
    // Stop the backup mid-stream (scope closed: readers and consumers gone), and the primary too.
    await backup.close()
    await chain.close()
    // A second backup starts from a copy of the primary's store at the block the primary stopped at.
    const copyDb = join(dir, "from-copy")
    const copied = await start(
      "backup-2",
      runBackup({ ...backupOptions, id: "b2", dbPath: copyDb, fromCopy: primaryDb })
    )
    // Both restart on their stores: the primary continues its chain, the backup from its own head.
    chain = await start("chain", runChain(chainOptions))
    backup = await start("backup", runBackup(backupOptions))
    await until(async () => chain.value.head() === 80, "primary at block 80")
    await until(async () => (await statusOf(backup.value.grpcAddress)).headBlock === 80, "backup at block 80")
    const status = await statusOf(backup.value.grpcAddress)
    expect(status.state).toBe(BackupState.BACKUP_STATE_FOLLOWING)
    expect(status.lagBlocks).toBe(0)
    expect(Number(status.cacheMisses)).toBe(0)
    await until(async () => (await statusOf(copied.value.grpcAddress)).headBlock === 80, "copied backup at block 80")
    await backup.close()
    await copied.close()
    await chain.close()
    const primary = openTables({ path: primaryDb, readOnly: true })
    const replicas = [backupDb, copyDb].map((path) => openTables({ path, readOnly: true }))
    try {
      for (const replica of replicas) {
        expect(readHead(replica)).toBe(80)
        expect(plainOf(replica)).toEqual(plainOf(primary))
      }
    } finally {
      await primary.env.close()
      for (const replica of replicas) await replica.env.close()
    }

    // Traces: the primary's block spans with the hint's construction and serialization, the backup's batch
    // spans with prefetch, wait and execute, and its block spans linked to the primary's.
    const spans = await Effect.runPromise(Effect.flatMap(TestSpans, (t) => t.spans).pipe(Effect.provide(tracing)))
    const named = (name: string) => spans.filter((span) => span.name === name)
    const childrenOf = (parent: (typeof spans)[number]) =>
      spans.filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId).map((span) => span.name)
    const chainBlocks = named("ira.chain.block")
    expect(chainBlocks.length).toBeGreaterThanOrEqual(80)
    expect(childrenOf(chainBlocks[0]!).sort()).toEqual(["ira.hint.construct", "ira.hint.serialize"])
    const batches = named("ira.backup.batch")
    expect(batches.length).toBeGreaterThan(0)
    expect(childrenOf(batches[0]!).sort()).toEqual(["ira.execute", "ira.prefetch", "ira.wait"])
    expect(named("ira.prefetch")[0]!.attributes["ira.keys.plain"]).toBeGreaterThan(0)
    const primarySpans = new Set(chainBlocks.map((span) => span.spanContext().spanId))
    const linked = named("ira.backup.block").filter((span) =>
      span.links.some((link) => primarySpans.has(link.context.spanId))
    )
    expect(linked.length).toBeGreaterThan(0)
  }, 240_000)
})
