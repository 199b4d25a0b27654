/**
 * `reef run coordinator`: Remora's coordinator. Accepts signed transactions over reef.v1.Execution, forms
 * blocks, orders them through a consensus source (a fixed window, or a POPUC replica group), schedules during
 * the consensus window and dispatches to the workers it sees in the cluster. `reef up` starts one (`x1`) with
 * `--workers` workers (w1, w2, ...); `--workers 0` starts no Remora at all.
 */
import * as Effect from "effect/Effect"
import { bad, Opt, ok, parseAddress } from "../cli/spec.js"
import { listenHostOption } from "./listen-host.js"
import { defineRole } from "./role.js"
import { ROLE_STATUS_COLUMNS } from "./status-columns.js"

/** gRPC port of `reef up`'s coordinator. */
export const DEFAULT_EXECUTION_PORT = 7401

/** The placement policies of @reef/remora (POLICIES; a test keeps them equal). */
export const POLICY_CHOICES = ["sfs", "round-robin", "random", "zeus", "hermes-nr"] as const

const addresses = Opt.of<ReadonlyArray<string>>({
  description: "popuc: the replicas' reef.v1.KV addresses, instead of finding --popuc-group through presence",
  placeholder: "HOST:PORT,...",
  defaultText: "the joined replicas of --popuc-group",
  parse: (raw) => {
    const list: Array<string> = []
    for (const item of raw.split(",")) {
      const parsed = parseAddress(item.trim())
      if (!parsed.ok) return bad(`"${item}": ${parsed.error}`)
      list.push(parsed.value)
    }
    return ok(list)
  }
})

const rate = (description: string) =>
  Opt.of<number>({
    description,
    placeholder: "R",
    default: 0,
    parse: (raw) => {
      const n = Number(raw)
      return raw.trim() !== "" && n >= 0 && n <= 1 ? ok(n) : bad("expected a share in 0..1")
    }
  })

const timing = (what: string) =>
  Opt.choice({
    description: `${what} during the consensus window (pre) or after commit (post)`,
    choices: ["pre", "post"],
    default: "pre"
  })

const coordinatorOptions = {
  "execution-port": Opt.port({ description: "gRPC port of reef.v1.Execution (0: a free one)", default: 0 }),
  host: listenHostOption("--execution-port"),
  consensus: Opt.choice({
    description: "where blocks get their order: a fixed window, or a POPUC replica group",
    choices: ["window", "popuc"],
    default: "window"
  }),
  "window-ms": Opt.integer({
    description: "window: a block commits this long after its proposal, in ms",
    default: 300,
    max: 600_000
  }),
  "reject-rate": rate("window: share of proposals consensus rejects (exercises plan invalidation)"),
  "reorder-rate": rate("window: share of proposals committed after the next one"),
  "popuc-group": Opt.token({ description: "popuc: the POPUC group (KV store) that orders blocks", default: "kv" }),
  "popuc-min-replicas": Opt.integer({
    description: "popuc: joined replicas of the group to wait for before serving",
    default: 1,
    min: 1,
    max: 9
  }),
  "popuc-replicas": addresses,
  policy: Opt.choice({ description: "placement policy of stateful work", choices: POLICY_CHOICES, default: "sfs" }),
  architecture: Opt.choice({
    description: "asymmetric (the coordinator schedules) or symmetric (every worker schedules every block)",
    choices: ["asymmetric", "symmetric"],
    default: "asymmetric"
  }),
  separation: Opt.choice({
    description: "who routes stateless work: the coordinator, each worker for its own transactions, or none",
    choices: ["coordinator", "worker", "none"],
    default: "coordinator"
  }),
  stateless: timing("stateless work"),
  scheduling: timing("scheduling"),
  "block-interval-ms": Opt.integer({ description: "a block is formed this often", default: 20, min: 1, max: 60_000 }),
  "max-block-txs": Opt.integer({ description: "transactions per block at most", default: 2000, min: 1, max: 100_000 }),
  seed: Opt.integer({ description: "seed of placement ties and the window's choices", default: 1, min: 0 }),
  "data-dir": Opt.of<string>({
    description:
      "where the coordinator keeps its committed blocks, receipts and epoch snapshots (LMDB); a restart on it resumes",
    placeholder: "DIR",
    defaultText: ".reef/remora/<cluster>-<id>",
    parse: (raw) => (raw.trim() === "" ? bad("expected a directory") : ok(raw))
  }),
  "in-memory": Opt.flag({
    description:
      "keep nothing on disk: workers' crashes are still recovered, but a restart of the coordinator starts a new chain"
  }),
  "epoch-ms": Opt.integer({
    description: "a snapshot epoch ends this often (ms; shorter: faster recovery, more snapshot work; 0: off)",
    default: 1000,
    min: 0,
    max: 3_600_000
  }),
  "epoch-blocks": Opt.integer({
    description: "a snapshot epoch also ends after this many blocks (0: only by time)",
    default: 0,
    min: 0,
    max: 1_000_000
  }),
  "stall-recovery-ms": Opt.integer({
    description:
      "replay by itself when work in flight makes no progress for this long (ms; messages lost with a NATS restart; 0: never)",
    default: 5000,
    min: 0,
    max: 3_600_000
  })
}

export const coordinatorRole = defineRole({
  role: "coordinator",
  summary: "Remora coordinator: orders, schedules and dispatches signed transactions, serving reef.v1.Execution",
  description:
    "Admits signed transactions (Submit stream, SubmitTransaction), forms a block every --block-interval-ms, " +
    "runs their stateless parts and plans their placement (SFS by default) while consensus decides the block, " +
    "then assigns versions and dispatches per-worker batches on commit; receipts, commit events and objects " +
    "are served over reef.v1.Execution. Workers are the `reef run worker` actors of the cluster. With " +
    "--consensus popuc, each block's digest is decided by a running POPUC group (found through presence).",
  options: coordinatorOptions,
  examples: [
    "reef run coordinator --id x1 --execution-port 7401",
    "reef run coordinator --id x1 --host 10.0.0.1 --execution-port 7401 --data-dir /var/lib/reef/x1",
    "reef run coordinator --id x1 --consensus popuc --popuc-group kv --popuc-min-replicas 3",
    "reef run coordinator --id x1 --window-ms 50 --reject-rate 0.1 --reorder-rate 0.2 --policy zeus"
  ],
  validate: (input) =>
    input.consensus === "window" &&
    (input["popuc-replicas"] !== undefined || input["popuc-min-replicas"] !== 1 || input["popuc-group"] !== "kv")
      ? "--popuc-* options need --consensus popuc"
      : input["in-memory"] && input["data-dir"] !== undefined
        ? "--in-memory keeps nothing on disk: it cannot take a --data-dir"
        : undefined,
  start: (input, context) =>
    Effect.gen(function* () {
      const [coordinator, { Layer }] = yield* Effect.promise(() =>
        Promise.all([import("@reef/coordinator"), import("effect")])
      )
      const replicas =
        input.consensus !== "popuc"
          ? []
          : (input["popuc-replicas"] ??
            (yield* coordinator.findPopucReplicas(input["popuc-group"], input["popuc-min-replicas"])))
      const consensus =
        input.consensus === "popuc"
          ? coordinator.popucConsensusLayer({ replicas, chain: coordinator.popucChain(context.cluster, context.id) })
          : coordinator.windowConsensusLayer({
              windowMs: input["window-ms"],
              rejectRate: input["reject-rate"],
              reorderRate: input["reorder-rate"],
              seed: input.seed
            })
      const services = yield* Layer.build(consensus)
      const handle = yield* coordinator
        .runCoordinator({
          id: context.id,
          grpcPort: input["execution-port"],
          grpcHost: input.host,
          blockIntervalMs: input["block-interval-ms"],
          maxBlockTxs: input["max-block-txs"],
          epochMs: input["epoch-ms"],
          stallRecoveryMs: input["stall-recovery-ms"],
          // Durable by default, like the chain's store: a restarted coordinator resumes its chain and receipts.
          ...(input["in-memory"]
            ? {}
            : { dataDir: input["data-dir"] ?? `.reef/remora/${context.cluster}-${context.id}` }),
          params: {
            policy: input.policy,
            architecture: input.architecture,
            separation: input.separation,
            statelessTiming: input.stateless === "pre" ? "pre-consensus" : "post-consensus",
            schedulingTiming: input.scheduling === "pre" ? "pre-consensus" : "post-consensus",
            seed: input.seed,
            epochBlocks: input["epoch-blocks"]
          }
        })
        .pipe(Effect.provide(services))
      return {
        description:
          `coordinator ${context.id} execution ${handle.grpcAddress} consensus ${handle.driver.consensus.description} ` +
          `policy ${input.policy}`
        // runCoordinator announces its grpc endpoint itself.
      }
    }),
  up: {
    byDefault: true,
    options: {
      workers: Opt.integer({
        description: "Remora workers (w1, w2, ...) with the coordinator x1; 0 starts no Remora",
        default: 3,
        min: 0,
        max: 16
      }),
      "worker-cores": Opt.integer({ description: "virtual cores of each Remora worker", default: 4, min: 1, max: 64 }),
      "remora-consensus": Opt.choice({
        description: "what orders Remora's blocks: a 300 ms window, or the POPUC group kv (needs --replicas)",
        choices: ["window", "popuc"],
        default: "window"
      }),
      "execution-port": Opt.port({
        description: "gRPC port of the coordinator's reef.v1.Execution",
        default: DEFAULT_EXECUTION_PORT
      })
    },
    validate: (input) => {
      const replicas = (input as { readonly replicas?: number }).replicas ?? 0
      return input["remora-consensus"] === "popuc" && input.workers > 0 && replicas === 0
        ? "--remora-consensus popuc needs the POPUC group: --replicas must not be 0"
        : undefined
    },
    plan: (input) => {
      if (input.workers === 0) return []
      const replicas = (input as { readonly replicas?: number }).replicas ?? 0
      const consensus =
        input["remora-consensus"] === "popuc"
          ? ["--consensus", "popuc", "--popuc-group", "kv", "--popuc-min-replicas", String(replicas)]
          : []
      return [
        { role: "coordinator", id: "x1", args: consensus, ports: { "execution-port": input["execution-port"] } },
        ...Array.from({ length: input.workers }, (_, i) => ({
          role: "worker",
          id: `w${i + 1}`,
          args: ["--coordinator", "x1", "--cores", String(input["worker-cores"])]
        }))
      ]
    }
  },
  status: ROLE_STATUS_COLUMNS.coordinator
})
