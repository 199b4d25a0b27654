/**
 * Ira across processes: a `reef run chain` primary and a `reef run backup` over a real nats-server with
 * JetStream. The backup is killed with SIGKILL while it replays, started again on its store, and must catch up
 * from the streams and end on exactly the primary's state.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { backupStatus } from "@reef/backup"
import { openTables, readHead, type StoreTables } from "@reef/chain"
import { BackupState } from "@reef/proto"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ActorProcess, eventually, type Harness, makeHarness, startActorProcess, startNats } from "./harness.js"

const CLUSTER = "ira-it"
const BLOCKS = 160
let harness: Harness
let natsUrl = ""
const dir = mkdtempSync(join(tmpdir(), "reef-ira-it-"))

beforeAll(async () => {
  harness = makeHarness()
  natsUrl = (await startNats(harness)).url
}, 60_000)
afterAll(async () => {
  await harness.close()
  rmSync(dir, { recursive: true, force: true })
})

const startBackup = () =>
  startActorProcess(harness, {
    role: "backup",
    id: "b1",
    natsUrl,
    cluster: CLUSTER,
    // A block waits for its hint as long as a loaded machine may delay the hint stream: what this test checks
    // is that blocks replayed after the restart use their hints, not how long a block waits for one.
    extraArgs: [
      "--chain",
      "it",
      "--db",
      join(dir, "b1"),
      "--readers",
      "2",
      "--batch-blocks",
      "16",
      "--hint-wait-ms",
      "10000"
    ]
  })

/** The backup's gRPC address, from its ready line. */
const grpcOf = (process: ActorProcess): string => {
  const line = process.lines.find((l) => l.includes("reef ready:"))
  const address = / grpc (\S+)/.exec(line ?? "")?.[1]
  if (address === undefined) throw new Error(`no grpc address in ${line}`)
  return address
}

const statusOf = (address: string) => Effect.runPromise(backupStatus(address))

const plainOf = (tables: StoreTables) =>
  [...tables.plain.getRange({})].map(({ key, value }) => `${key.toString("hex")}=${value.toString("hex")}`)

describe("an Ira backup in its own process, following a chain primary in another", () => {
  it("is killed mid-replay, resumes from the streams and converges on the primary's state", async () => {
    const chain = await startActorProcess(harness, {
      role: "chain",
      id: "p1",
      natsUrl,
      cluster: CLUSTER,
      extraArgs: [
        "--chain",
        "it",
        "--db",
        join(dir, "p1"),
        "--block-ms",
        "40",
        "--txs-per-block",
        "30",
        "--max-blocks",
        String(BLOCKS)
      ]
    })
    let backup = await startBackup()
    await Effect.runPromise(
      eventually(
        Effect.tryPromise(() => statusOf(grpcOf(backup))).pipe(
          Effect.filterOrFail(
            (s) => s.headBlock >= 40,
            () => new Error("backup below block 40")
          )
        ),
        120
      )
    )
    backup.child.kill("SIGKILL")
    expect(await backup.exited).toBe("SIGKILL")

    backup = await startBackup()
    const final = await Effect.runPromise(
      eventually(
        Effect.tryPromise(() => statusOf(grpcOf(backup))).pipe(
          Effect.filterOrFail(
            (s) => s.headBlock === BLOCKS,
            (s) => new Error(`backup at ${s.headBlock} of ${BLOCKS}`)
          )
        ),
        180
      )
    )
    expect(final.state).toBe(BackupState.BACKUP_STATE_FOLLOWING)
    expect(Number(final.lagBlocks)).toBe(0)
    // Blocks replayed after the restart used their hints: nothing was read on demand.
    expect(Number(final.cacheMisses)).toBe(0)

    backup.child.kill("SIGTERM")
    chain.child.kill("SIGTERM")
    await Promise.all([backup.exited, chain.exited])
    const primary = openTables({ path: join(dir, "p1"), readOnly: true })
    const replica = openTables({ path: join(dir, "b1"), readOnly: true })
    try {
      expect(readHead(primary)).toBe(BLOCKS)
      expect(readHead(replica)).toBe(BLOCKS)
      expect(plainOf(replica)).toEqual(plainOf(primary))
    } finally {
      await primary.env.close()
      await replica.env.close()
    }
  }, 300_000)
})
