/**
 * `reef run backup`: an Ira backup. Follows a chain primary's block and hint streams, replays the blocks with
 * hint-based prefetch into its own LMDB store, and serves reef.v1.Backup (Status, WatchReplay). `reef up
 * --with ira` starts one (`b1`) following the primary `p1`.
 */
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { listenHostOption } from "./listen-host.js"
import { defineRole } from "./role.js"
import { ROLE_STATUS_COLUMNS } from "./status-columns.js"

/** First gRPC port of `reef up`'s backups. */
export const DEFAULT_BACKUP_PORT = 7201

export const backupRole = defineRole({
  role: "backup",
  summary: "Ira backup: replays a chain primary's blocks from hints into its own store, serving reef.v1.Backup",
  description:
    "Reads the chain's blocks and hints from JetStream starting after the last block its store holds, so it " +
    "catches up when started late and resumes after a restart. Each batch of blocks is prefetched from the hints " +
    "by --readers threads in key order, then executed from per-block caches; every block's state-change hash is " +
    "checked against the primary's (a wrong hint costs a re-execution, a real divergence stops the replay). " +
    "--from-copy starts from a copy of the primary's store (LMDB's own copy: consistent while the primary runs) instead of building the genesis.",
  options: {
    chain: Opt.token({ description: "the chain to follow", default: "ira" }),
    db: Opt.text({
      description: "directory of the backup's own store",
      defaultText: ".reef/ira/<cluster>-<chain>-<id>"
    }),
    "from-copy": Opt.text({
      description: "start from a copy of this store directory (e.g. the primary's, even while it runs)",
      defaultText: "build the genesis"
    }),
    readers: Opt.integer({ description: "prefetch reader threads (k)", default: 4, min: 1, max: 64 }),
    "batch-blocks": Opt.integer({ description: "blocks per prefetch batch", default: 32, min: 1, max: 1024 }),
    "hint-wait-ms": Opt.integer({
      description: "how long a block waits for its hint before replaying without",
      default: 250,
      min: 0
    }),
    "no-hints": Opt.flag({ description: "replay on demand, ignoring hints (the baseline path)" }),
    "latency-us": Opt.integer({
      description: "what-if: delay every store seek this many µs (an emulated remote disk)",
      default: 0,
      min: 0
    }),
    "grpc-port": Opt.port({ description: "gRPC port of reef.v1.Backup (0: a free one)", default: 0 }),
    host: listenHostOption("--grpc-port")
  },
  examples: [
    "reef run backup --id b1 --grpc-port 7201",
    "reef run backup --id b2 --readers 16 --from-copy .reef/ira/local-ira-p1"
  ],
  start: (input, context) =>
    Effect.gen(function* () {
      const { runBackup } = yield* Effect.promise(() => import("@reef/backup"))
      const dbPath = input.db ?? `.reef/ira/${context.cluster}-${input.chain}-${context.id}`
      const handle = yield* runBackup({
        id: context.id,
        natsUrl: context.natsUrl,
        chain: input.chain,
        dbPath,
        readers: input.readers,
        batchBlocks: input["batch-blocks"],
        hintWaitMs: input["hint-wait-ms"],
        ignoreHints: input["no-hints"],
        latencyUs: input["latency-us"],
        grpcPort: input["grpc-port"],
        grpcHost: input.host,
        ...(input["from-copy"] === undefined ? {} : { fromCopy: input["from-copy"] })
      })
      return {
        description: `backup ${context.id} of ${input.chain} grpc ${handle.grpcAddress} store ${dbPath}`,
        endpoints: { grpc: handle.grpcAddress }
      }
    }),
  up: {
    byDefault: false,
    options: {
      backups: Opt.integer({
        description: "ira: backups following the chain (b1, b2, ...)",
        default: 1,
        min: 0,
        max: 8
      }),
      "backup-port": Opt.port({
        description: "gRPC port of the backup b1 (reef.v1.Backup); b2 gets the next one, and so on",
        default: DEFAULT_BACKUP_PORT
      })
    },
    plan: (input) =>
      Array.from({ length: input.backups }, (_, i) => ({
        role: "backup",
        id: `b${i + 1}`,
        args: [],
        ports: { "grpc-port": input["backup-port"] + i }
      }))
  },
  status: ROLE_STATUS_COLUMNS.backup
})
