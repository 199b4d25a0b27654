/**
 * The @effect/cli definition of `reef`: run one actor, bring up a local cluster, show its status, run a
 * benchmark. main.ts dispatches here except for `reef run`, which takes the lighter path of run-main.ts.
 */
import { Args, Command, Options } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

// Each command loads its own modules, so an actor process does not load the gateway client or the launcher.
const load = <M>(module: () => Promise<M>) => Effect.promise(module)

const natsOption = Options.text("nats").pipe(
  Options.withDescription(
    "NATS server URL (default for run/status: nats://127.0.0.1:4222; up: an embedded nats-server)"
  ),
  Options.optional
)
const clusterOption = Options.text("cluster").pipe(Options.withDefault("local"))
const grpcPortOption = Options.integer("grpc-port").pipe(
  Options.withDescription("gRPC port of the gateway"),
  Options.withDefault(50051)
)

const run = Command.make(
  "run",
  {
    role: Args.text({ name: "role" }),
    id: Options.text("id").pipe(Options.optional),
    nats: natsOption,
    cluster: clusterOption,
    grpcPort: grpcPortOption,
    group: Options.text("group").pipe(Options.withDescription("replica: POPUC group name"), Options.optional),
    members: Options.text("members").pipe(
      Options.withDescription("replica: comma-separated member ids"),
      Options.optional
    ),
    kvPort: Options.integer("kv-port").pipe(
      Options.withDescription("replica: gRPC port of reef.v1.KV"),
      Options.optional
    ),
    engines: Options.integer("engines").pipe(
      Options.withDescription("replica: parallel NIC engines"),
      Options.optional
    ),
    interactionMs: Options.text("interaction-ms").pipe(
      Options.withDescription("replica: fixed ΔI in ms instead of calibrating"),
      Options.optional
    ),
    instanceGapMs: Options.text("instance-gap-ms").pipe(
      Options.withDescription(
        "replica: gap between consensus instances in ms (default 3ΔI, an idle gap; ΔI/3 with timed rounds)"
      ),
      Options.optional
    ),
    roundClose: Options.choice("round-close", ["allHeard", "timer"]).pipe(
      Options.withDescription("replica: close a consensus round once all peers are heard (default) or at its timer"),
      Options.optional
    ),
    logBytes: Options.integer("log-bytes").pipe(
      Options.withDescription("replica: payload bytes of decisions kept for peers' catch-up (older: snapshot)"),
      Options.optional
    )
  },
  ({
    role,
    id,
    nats,
    cluster,
    grpcPort,
    group,
    members,
    kvPort,
    engines,
    interactionMs,
    instanceGapMs,
    roundClose,
    logBytes
  }) =>
    Effect.flatMap(
      load(() => import("./run-role.js")),
      ({ runRole }) =>
        runRole(role, {
          id: Option.getOrElse(id, () => `${role}-${process.pid}`),
          cluster,
          natsUrl: Option.getOrElse(nats, () => "nats://127.0.0.1:4222"),
          grpcPort,
          flags: {
            group: Option.getOrUndefined(group),
            members: Option.getOrUndefined(members),
            "kv-port": Option.getOrUndefined(Option.map(kvPort, String)),
            engines: Option.getOrUndefined(Option.map(engines, String)),
            "interaction-ms": Option.getOrUndefined(interactionMs),
            "instance-gap-ms": Option.getOrUndefined(instanceGapMs),
            "log-bytes": Option.getOrUndefined(Option.map(logBytes, String)),
            "round-close": Option.getOrUndefined(roundClose)
          }
        })
    )
).pipe(Command.withDescription("Start one actor process"))

const up = Command.make(
  "up",
  {
    nats: natsOption,
    cluster: clusterOption,
    grpcPort: grpcPortOption,
    counters: Options.integer("counters").pipe(Options.withDefault(2)),
    replicas: Options.integer("replicas").pipe(
      Options.withDescription("replicas of the POPUC KV group (odd; 0 for none)"),
      Options.withDefault(3)
    ),
    workload: Options.boolean("workload").pipe(
      Options.withDescription("run the demo workload, print its results, then shut the cluster down")
    )
  },
  (options) =>
    Effect.flatMap(
      load(() => import("./up.js")),
      ({ runUp }) => runUp({ ...options, natsUrl: options.nats })
    )
).pipe(
  Command.withDescription("Start a local cluster: nats-server (embedded unless --nats), the gateway and every role")
)

const status = Command.make(
  "status",
  {
    gateway: Options.text("gateway").pipe(Options.withDefault("127.0.0.1:50051")),
    role: Options.text("role").pipe(Options.optional)
  },
  ({ gateway, role }) =>
    Effect.flatMap(
      load(() => import("./status.js")),
      ({ printStatus }) => printStatus(gateway, Option.getOrUndefined(role))
    )
).pipe(Command.withDescription("Print the actor table, read over gRPC from the gateway"))

const bench = Command.make(
  "bench",
  { suite: Args.text({ name: "suite" }), quick: Options.boolean("quick") },
  ({ suite, quick }) =>
    Effect.flatMap(
      load(() => import("./bench.js")),
      ({ runBench }) => runBench(suite, quick)
    )
).pipe(Command.withDescription("Run a benchmark suite (writes bench/results/<suite>.json)"))

const reef = Command.make("reef").pipe(Command.withSubcommands([run, up, status, bench]))

const cli = Command.run(reef, { name: "reef", version: "0.1.0" })

export const main = (argv: ReadonlyArray<string>) =>
  cli(argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain({ disableErrorReporting: false }))
