/**
 * `reef backup status|watch`: Ira backups, found through presence (each announces its `grpc` endpoint), asked
 * over reef.v1.Backup. `status` is one row per backup (how far behind its primary, how fast); `watch` prints
 * each block one backup replays, as it replays it, until Ctrl-C: the way to see a backup catch up.
 */
import type { BackupStatus, BlockReplayed } from "@reef/proto"
import * as Effect from "effect/Effect"
import { ClusterStateError, UsageError } from "../cli/errors.js"
import { group, Opt } from "../cli/spec.js"
import { formatTable } from "../table.js"
import { type ClientContext, dataCommand } from "./command.js"

/** The backups of the cluster (joined, with a gRPC endpoint), or only `id`. */
const backups = (context: ClientContext, id: string | undefined) =>
  Effect.gen(function* () {
    const { members, endpointsOf } = yield* Effect.promise(() => import("./gateway.js"))
    const all = endpointsOf(yield* members(context, "backup"), "backup", "grpc")
    if (all.length === 0) {
      return yield* new ClusterStateError({
        message: "no backup in this cluster (start one with 'reef up --with chain,backup' or 'reef run backup')"
      })
    }
    const chosen = id === undefined ? all : all.filter((b) => b.id === id)
    if (chosen.length === 0) {
      return yield* new UsageError({
        message: `--id ${id}: no such backup (backups: ${all.map((b) => b.id).join(", ")})`
      })
    }
    return chosen
  })

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
const STATES: Record<number, string> = { 1: "catching up", 2: "following", 3: "DIVERGED" }

const status = dataCommand({
  name: "status",
  command: "backup status",
  summary: "how far each Ira backup is behind its primary, how fast it replays, and what its hints cost",
  options: { id: Opt.token({ description: "only this backup", defaultText: "every backup" }) },
  examples: ["reef backup status", "reef backup status --id b1 -o json"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { backupStatus } = yield* Effect.promise(() => import("@reef/backup"))
      const list = yield* backups(context, input.id)
      return yield* Effect.forEach(list, (b) => backupStatus(b.address, context.timeoutMs), {
        concurrency: "unbounded"
      })
    }),
  text: (rows: ReadonlyArray<BackupStatus>) =>
    formatTable(
      [
        "backup",
        "chain",
        "state",
        "head",
        "primary",
        "lag",
        "blocks/s",
        "hint errors",
        "rejected",
        "misses",
        "last hash"
      ],
      rows.map((r) => [
        r.id,
        r.chain,
        STATES[r.state] ?? "?",
        String(r.headBlock),
        String(r.primaryHead),
        String(r.lagBlocks),
        r.blocksPerSecond.toFixed(1),
        String(r.hintErrors),
        String(r.hintsRejected),
        String(r.cacheMisses),
        hex(r.lastVerifiedHash).slice(0, 16)
      ])
    ) +
    rows
      .filter((r) => r.divergence !== "")
      .map((r) => `\n${r.id}: ${r.divergence}`)
      .join(""),
  json: (rows: ReadonlyArray<BackupStatus>) =>
    rows.map((r) => ({ ...r, state: STATES[r.state] ?? "unknown", lastVerifiedHash: hex(r.lastVerifiedHash) }))
})

const watch = dataCommand({
  name: "watch",
  command: "backup watch",
  summary: "print each block a backup replays, live: wait, execution, hint hits and misses, lag",
  options: {
    id: Opt.token({ description: "the backup to watch", defaultText: "the first backup" }),
    from: Opt.integer({
      description: "also the blocks it replayed since this one (if it still keeps them)",
      default: 0,
      min: 0
    })
  },
  examples: ["reef backup watch", "reef backup watch --id b1 -o json"],
  run: (input, context) =>
    Effect.gen(function* () {
      const { watchReplay } = yield* Effect.promise(() => import("@reef/backup"))
      const [backup] = yield* backups(context, input.id)
      yield* watchReplay(backup!.address, input.from, context.emit)
    }),
  text: (b: BlockReplayed) =>
    `block ${b.number}: wait ${b.waitMs.toFixed(1)} ms, exec ${b.execMs.toFixed(1)} ms, ` +
    `${b.hintedKeys} hinted keys, ${b.cacheHits} hits, ${b.cacheMisses} misses` +
    `${b.hintError === "" ? "" : `, no hint (${b.hintError})`}${b.hintRejected ? ", hint rejected" : ""}, lag ${b.lagBlocks}`,
  json: (b: BlockReplayed) => ({ ...b, stateHash: hex(b.stateHash) })
})

export const backupCommands = group({
  name: "backup",
  summary: "inspect Ira backups: status, live replay",
  placeholder: "<command>",
  listHeading: "Commands",
  commands: [status, watch]
})
