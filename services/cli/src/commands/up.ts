/**
 * `reef up`: the spec of the local-cluster command. Its options are its own plus every role's `up.options`
 * (`--counters`, `--replicas`, `--kv-port`, ...), so a role that joins `reef up` documents its sizing itself.
 */
import * as Effect from "effect/Effect"
import type { CliFailure } from "../cli/errors.js"
import { suggestion } from "../cli/parse.js"
import { type Input, leaf, Opt, type Options } from "../cli/spec.js"
import { roles } from "../roles/index.js"
import type { RoleSpec } from "../roles/role.js"
import { DEFAULT_CLUSTER } from "./common.js"

export const DEFAULT_NATS_PORT = 4222
export const DEFAULT_NATS_MONITOR_PORT = 8222
/** First /metrics port of `reef up`'s processes (OpenTelemetry's Prometheus default); each next one gets +1. */
export const DEFAULT_METRICS_PORT = 9464

const upRoles = roles.filter((r): r is RoleSpec<any, any> & { up: NonNullable<RoleSpec["up"]> } => r.up !== undefined)
const optionalRoles = upRoles.filter((r) => !r.up.byDefault).map((r) => r.role)

const ownOptions = {
  nats: Opt.natsUrl({
    description: "use this NATS server instead of starting one",
    defaultText: "an embedded nats-server"
  }),
  "nats-port": Opt.port({ description: "client port of the embedded nats-server", default: DEFAULT_NATS_PORT }),
  "nats-monitor-port": Opt.port({
    description: "HTTP monitoring port of the embedded nats-server (/varz, /connz)",
    default: DEFAULT_NATS_MONITOR_PORT
  }),
  cluster: Opt.token({ description: "cluster name (subjects reef.<cluster>.*)", default: DEFAULT_CLUSTER }),
  "cluster-file": Opt.text({
    description: "where to write the cluster's endpoints for other reef commands",
    placeholder: "PATH",
    defaultText: ".reef/cluster.json in this directory"
  }),
  "metrics-port": Opt.port({
    description: "/metrics port of the first actor process; each next process gets the next port",
    default: DEFAULT_METRICS_PORT
  }),
  with: Opt.tokens({
    description: `roles a plain reef up does not start${optionalRoles.length > 0 ? ` (${optionalRoles.join(", ")})` : ""}`,
    placeholder: "ROLE,...",
    default: []
  }),
  workload: Opt.flag({ description: "run the demo workload, print its results, then stop the cluster" }),
  secure: Opt.flag({
    description:
      "authentication, per-role NATS permissions and TLS: an nkey identity per role (.reef/nats), a local CA (.reef/tls), mutual TLS on NATS, TLS and a bearer token on gRPC"
  }),
  tls: Opt.flag({ description: "TLS alone: a local CA (.reef/tls), mutual TLS on NATS, TLS on gRPC" })
}

/** Every role's `reef up` options next to reef up's own; a clash is a bug in a role's file. */
const allOptions = (): Options => {
  const options: Record<string, unknown> = { ...ownOptions }
  for (const role of upRoles) {
    for (const [name, spec] of Object.entries(role.up.options)) {
      if (name in options) throw new Error(`role ${role.role}: reef up option --${name} is already defined`)
      options[name] = spec
    }
  }
  return options as Options
}

export type UpInput = Input<typeof ownOptions, {}> & Readonly<Record<string, unknown>>

/** The roles this `reef up` starts: every default one, plus those named in --with. */
export const enabledRoles = (input: UpInput) => upRoles.filter((r) => r.up.byDefault || input.with.includes(r.role))

const validateUp = (input: UpInput): string | undefined => {
  if ((input.secure || input.tls) && input.nats !== undefined) {
    return `--${input.secure ? "secure" : "tls"} configures the embedded nats-server; with --nats, give each process that server's credentials (--creds, REEF_NATS_TLS_CA)`
  }
  for (const name of input.with) {
    const role = roles.find((r) => r.role === name)
    if (role === undefined) {
      const names = roles.map((r) => r.role)
      return `--with: unknown role "${name}"${suggestion(name, names)}; roles: ${names.join(", ")}`
    }
    if (role.up === undefined) return `--with: role ${name} has no part in reef up (start it with 'reef run ${name}')`
  }
  for (const role of enabledRoles(input)) {
    const problem = role.up.validate?.(input)
    if (problem !== undefined) return problem
  }
  return undefined
}

export const upCommand = leaf({
  name: "up",
  summary: "start a local cluster: nats-server, the gateway and every role, one process per actor",
  description:
    "Starts an embedded nats-server (unless --nats), then one `reef run` process per actor, printing each as " +
    "it becomes ready and every endpoint once all are. Ports are stable: NATS 4222 (monitoring 8222), the " +
    "gateway 50051, KV 7001 and up, Remora 7401, Ira backups 7201 and up, AirDB 7301, /metrics 9464 and up; a " +
    "port in use falls back to the next free one above it, and the banner says so. The endpoints go to .reef/cluster.json, which reef run, reef status and the data-plane " +
    "commands read, so they need no flags. Runs until Ctrl-C, which stops every process it started.",
  options: allOptions() as typeof ownOptions,
  examples: [
    "reef up",
    "reef up --replicas 5 --counters 0",
    "reef up --workload",
    "reef up --nats nats://127.0.0.1:4222   # an existing server (e.g. observability/compose.yaml)"
  ],
  validate: (input) => validateUp(input as UpInput),
  run: (input): Effect.Effect<void, CliFailure> =>
    Effect.flatMap(
      Effect.promise(() => import("../up.js")),
      ({ runUp }) => runUp(input as UpInput)
    )
})
