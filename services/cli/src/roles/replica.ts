/**
 * `reef run replica`: one POPUC replica (host server + NIC engine thread) serving reef.v1.KV. `reef up` starts
 * `--replicas` of them (r1, r2, ...) as the group `kv`, with KV ports from `--kv-port` up.
 */
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { defineRole } from "./role.js"
import { ROLE_STATUS_COLUMNS } from "./status-columns.js"

/** First KV port of `reef up`'s replicas (r1; r2 gets the next, ...). */
export const DEFAULT_KV_PORT = 7001

/** First Redis (RESP) port of `reef up`'s replicas: next to Redis's own 6379, which a local Redis may hold. */
export const DEFAULT_RESP_PORT = 6380

/** POPUC needs N = 2t + 1 distinct members. */
const membersProblem = (members: ReadonlyArray<string>, id: string): string | undefined => {
  if (!members.includes(id)) return `--members ${members.join(",")} does not include this replica's --id ${id}`
  if (members.length % 2 === 0) {
    return `--members has ${members.length} replicas; POPUC needs an odd number (N = 2t + 1)`
  }
  return undefined
}

export const replicaRole = defineRole({
  role: "replica",
  summary: "POPUC replica (host server + NIC engine thread) serving the replicated KV store reef.v1.KV",
  description:
    "Replicates a linearizable KV store with POPUC consensus: writes and reads are ordered through consensus " +
    "instances decided by the NIC engine, a worker thread with its own NATS connection. Start every member of " +
    "the group with the same --group and --members; a group starts once its members answer (a majority after " +
    "10 s). A restarted replica rejoins the running group by itself. Without --members, a replica whose group " +
    "is already running adopts its members if it is one of them, and is refused (naming them) if not.",
  options: {
    group: Opt.token({ description: "POPUC group name (one KV store)", default: "kv" }),
    members: Opt.tokens({
      description: "member ids of the group, this replica included; an odd number (N = 2t + 1)",
      defaultText:
        "the members of the running group of that name (refused if it runs without this id), else this replica alone"
    }),
    "kv-port": Opt.port({ description: "gRPC port of reef.v1.KV (0: a free one)", default: 0 }),
    "kv-host": Opt.text({
      description:
        "address the KV and RESP ports listen on and are announced with (this machine's, for remote clients)",
      placeholder: "HOST",
      default: "127.0.0.1"
    }),
    "resp-port": Opt.port({
      description: "Redis (RESP2/RESP3) port over the same replicated state (0: a free one)",
      defaultText: "none"
    }),
    app: Opt.choice({
      description:
        "replicate an application instead of the KV records: redis (a local redis-server, the paper's design)",
      choices: ["redis"],
      defaultText: "none"
    }),
    "redis-port": Opt.port({
      description: "--app redis: the redis-server to front (its contents are replaced)",
      defaultText: "one started on a free port"
    }),
    engines: Opt.integer({ description: "parallel NIC engines (pipelined consensus)", default: 1, min: 1, max: 16 }),
    "interaction-ms": Opt.number({
      description: "fixed interaction delay ΔI in ms instead of calibrating it with the peers",
      defaultText: "calibrated"
    }),
    "instance-gap-ms": Opt.number({
      description: "gap between consensus instances in ms",
      defaultText: "3ΔI, an idle gap; ΔI/3 with --round-close timer"
    }),
    "round-close": Opt.choice({
      description: "close a consensus round once all peers are heard, or at its timer (the paper's timed rounds)",
      choices: ["allHeard", "timer"],
      default: "allHeard"
    }),
    "round-values": Opt.choice({
      description:
        "how rounds after the first carry client values: by reference (their bodies travelled in round 1) or whole, as the paper's Alg. 2",
      choices: ["refs", "full"],
      default: "refs"
    }),
    "log-bytes": Opt.integer({
      description: "payload bytes of decisions kept for peers' catch-up (a peer further behind gets a snapshot)",
      default: 4 * 1024 * 1024,
      min: 1
    })
  },
  examples: [
    "reef run replica --id r1 --members r1,r2,r3 --kv-port 7001   # and r2, r3 likewise",
    "reef run replica --id r1 --round-close timer --interaction-ms 8"
  ],
  validate: (input, id) => membersProblem(input.members ?? [id], id),
  start: (input, context) =>
    Effect.gen(function* () {
      const [{ runReplica }, { nicActor, roundPeriodMs }, { spawn }] = yield* Effect.promise(() =>
        Promise.all([import("@reef/replica"), import("@reef/nic"), import("@reef/kernel")])
      )
      const members =
        input.members ??
        (yield* Effect.flatMap(
          Effect.promise(() => import("./replica-group.js")),
          ({ membersToStartWith }) => membersToStartWith(input.group, context.id, context.cluster)
        ))
      const handle = yield* runReplica({
        id: context.id,
        group: input.group,
        members,
        natsUrl: context.natsUrl,
        grpcPort: input["kv-port"],
        grpcHost: input["kv-host"],
        ...(input["resp-port"] === undefined ? {} : { respPort: input["resp-port"] }),
        ...(input.app === undefined
          ? {}
          : {
              app: {
                kind: input.app,
                ...(input["redis-port"] === undefined ? {} : { redisPort: input["redis-port"] })
              }
            }),
        engines: input.engines,
        roundClose: input["round-close"],
        roundValues: input["round-values"],
        log: { maxBytes: input["log-bytes"] },
        ...(input["interaction-ms"] === undefined ? {} : { interactionMs: input["interaction-ms"] }),
        ...(input["instance-gap-ms"] === undefined ? {} : { instanceGapMs: input["instance-gap-ms"] })
      })
      yield* spawn(nicActor, context.id)
      const round = roundPeriodMs(handle.engine.roundTimer).toFixed(2)
      return {
        description:
          `replica ${context.id} kv ${handle.grpcAddress}` +
          `${handle.respAddress === undefined ? "" : ` resp ${handle.respAddress}`}` +
          `${handle.redisAddress === undefined ? "" : ` redis ${handle.redisAddress}`} group ${input.group} ` +
          `members ${members.join(",")} ` +
          `engines ${handle.engine.engines} round ${round}ms`
        // runReplica announces its kv endpoint itself (so does every replica a test or benchmark starts).
      }
    }),
  up: {
    byDefault: true,
    options: {
      replicas: Opt.integer({
        description: "replicas of the POPUC KV group kv (odd: N = 2t + 1; 0 for none)",
        default: 3,
        min: 0,
        max: 9
      }),
      "kv-port": Opt.port({ description: "KV port of r1; r2 gets the next one, and so on", default: DEFAULT_KV_PORT }),
      "resp-port": Opt.port({
        description: "Redis (RESP) port of r1; r2 gets the next one, and so on",
        default: DEFAULT_RESP_PORT
      })
    },
    validate: (input) =>
      input.replicas % 2 === 0 && input.replicas > 0
        ? `--replicas ${input.replicas}: POPUC needs an odd number of replicas (N = 2t + 1), or 0 for none`
        : undefined,
    plan: (input) => {
      const ids = Array.from({ length: input.replicas }, (_, i) => `r${i + 1}`)
      return ids.map((id, i) => ({
        role: "replica",
        id,
        args: ["--group", "kv", "--members", ids.join(",")],
        ports: { "kv-port": input["kv-port"] + i, "resp-port": input["resp-port"] + i }
      }))
    }
  },
  status: ROLE_STATUS_COLUMNS.replica
})
