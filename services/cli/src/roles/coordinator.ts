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

/**
 * The autoscaler's defaults (@reef/remora's defaultAutoscalerParams; a test keeps them equal): the CLI does not
 * load Remora to print its help.
 */
export const AUTOSCALER_DEFAULTS = {
  highLoad: 20_000,
  lowLoad: 5_000,
  sustain: 3,
  coolDownMs: 5_000,
  spawnTimeoutMs: 30_000
} as const

/** How often the autoscaler observes the pool (ms). */
export const DEFAULT_AUTOSCALE_EVERY_MS = 1_000

/** gRPC port of `reef up`'s coordinator. */
export const DEFAULT_EXECUTION_PORT = 7401

/** The placement policies of @reef/remora (POLICIES; a test keeps them equal). */
export const POLICY_CHOICES = ["sfs", "round-robin", "random", "zeus", "hermes-nr", "locality"] as const

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

/** `--autoscale MIN..MAX`: the pool's bounds (1 <= MIN <= MAX). */
export const parsePoolRange = (raw: string) => {
  const m = /^\s*(\d+)\s*\.\.\s*(\d+)\s*$/.exec(raw)
  if (m === null) return bad("expected MIN..MAX, e.g. 2..4")
  const min = Number(m[1])
  const max = Number(m[2])
  if (min < 1) return bad("MIN must be at least 1")
  if (max < min) return bad(`MAX (${max}) must be at least MIN (${min})`)
  if (max > 256) return bad("MAX must be at most 256")
  return ok({ min, max })
}

const autoscaleOptions = {
  autoscale: Opt.of<{ readonly min: number; readonly max: number }>({
    description:
      "keep MIN..MAX workers active, following the load (§4.7); the other workers of the cluster wait as spares, " +
      "and a worker retired on scale-in stops",
    placeholder: "MIN..MAX",
    defaultText: "off: every worker present takes work",
    parse: parsePoolRange
  }),
  "autoscale-high": Opt.integer({
    description: "scale out when the mean outstanding work per active worker stays above this (µs)",
    default: AUTOSCALER_DEFAULTS.highLoad,
    min: 1
  }),
  "autoscale-low": Opt.integer({
    description: "scale in when it stays below this (µs; below --autoscale-high)",
    default: AUTOSCALER_DEFAULTS.lowLoad,
    min: 0
  }),
  "autoscale-sustain": Opt.integer({
    description: "observations in a row the load must stay out of its band before a decision",
    default: AUTOSCALER_DEFAULTS.sustain,
    min: 1,
    max: 1000
  }),
  "autoscale-cooldown-ms": Opt.integer({
    description: "no scaling decision within this long of the previous one (ms)",
    default: AUTOSCALER_DEFAULTS.coolDownMs,
    min: 0,
    max: 3_600_000
  }),
  "autoscale-every-ms": Opt.integer({
    description: "the autoscaler observes the pool's load this often (ms)",
    default: DEFAULT_AUTOSCALE_EVERY_MS,
    min: 10,
    max: 600_000
  })
}

const coordinatorOptions = {
  ...autoscaleOptions,
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

const autoscaleTuned = (input: Readonly<Record<string, unknown>>): boolean =>
  input["autoscale-high"] !== AUTOSCALER_DEFAULTS.highLoad ||
  input["autoscale-low"] !== AUTOSCALER_DEFAULTS.lowLoad ||
  input["autoscale-sustain"] !== AUTOSCALER_DEFAULTS.sustain ||
  input["autoscale-cooldown-ms"] !== AUTOSCALER_DEFAULTS.coolDownMs ||
  input["autoscale-every-ms"] !== DEFAULT_AUTOSCALE_EVERY_MS

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
    "reef run coordinator --id x1 --window-ms 50 --reject-rate 0.1 --reorder-rate 0.2 --policy zeus",
    "reef run coordinator --id x1 --autoscale 2..4 --autoscale-high 20000 --autoscale-low 5000"
  ],
  validate: (input) =>
    input.consensus === "window" &&
    (input["popuc-replicas"] !== undefined || input["popuc-min-replicas"] !== 1 || input["popuc-group"] !== "kv")
      ? "--popuc-* options need --consensus popuc"
      : input["in-memory"] && input["data-dir"] !== undefined
        ? "--in-memory keeps nothing on disk: it cannot take a --data-dir"
        : input.autoscale === undefined && autoscaleTuned(input)
          ? "--autoscale-* options need --autoscale MIN..MAX"
          : input.autoscale !== undefined && input.architecture === "symmetric"
            ? "--autoscale needs --architecture asymmetric: symmetric workers all schedule every block, so none can retire"
            : input["autoscale-low"] >= input["autoscale-high"]
              ? `--autoscale-low (${input["autoscale-low"]}) must be below --autoscale-high (${input["autoscale-high"]})`
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
          ...(input.autoscale === undefined
            ? {}
            : {
                autoscale: {
                  spawnTimeoutMs: AUTOSCALER_DEFAULTS.spawnTimeoutMs,
                  min: input.autoscale.min,
                  max: input.autoscale.max,
                  highLoad: input["autoscale-high"],
                  lowLoad: input["autoscale-low"],
                  sustain: input["autoscale-sustain"],
                  coolDownMs: input["autoscale-cooldown-ms"],
                  everyMs: input["autoscale-every-ms"]
                }
              }),
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
      }),
      autoscale: Opt.of<{ readonly min: number; readonly max: number }>({
        description:
          "the coordinator keeps MIN..MAX workers active as the load asks; reef up starts MAX workers (or --workers, " +
          "if more), the others wait as spares",
        placeholder: "MIN..MAX",
        defaultText: "off",
        parse: parsePoolRange
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
      const scaling = input.autoscale
      const autoscale = scaling === undefined ? [] : ["--autoscale", `${scaling.min}..${scaling.max}`]
      const workers = Math.max(input.workers, scaling?.max ?? 0)
      return [
        {
          role: "coordinator",
          id: "x1",
          args: [...consensus, ...autoscale],
          ports: { "execution-port": input["execution-port"] }
        },
        ...Array.from({ length: workers }, (_, i) => ({
          role: "worker",
          id: `w${i + 1}`,
          args: ["--coordinator", "x1", "--cores", String(input["worker-cores"])]
        }))
      ]
    }
  },
  status: ROLE_STATUS_COLUMNS.coordinator
})
