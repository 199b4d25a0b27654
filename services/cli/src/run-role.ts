/**
 * `reef run <role>`: one actor process. It finds the cluster (flags, else the cluster file of a running
 * `reef up`), serves its `/metrics`, connects to NATS (reconnecting forever once connected), starts the role,
 * announces where it is reached, prints one `reef ready:` line and runs until SIGTERM/SIGINT, when the scope
 * closes: subscriptions drain, mailboxes empty, a leaving heartbeat goes out, the last spans are exported.
 */
import { READY_PREFIX, watchParent } from "@reef/devkit"
import { BusError, natsKernelLayer, PresenceDetails } from "@reef/kernel"
import { ObservabilityLive } from "@reef/observability/live"
import { serveMetrics } from "@reef/observability/metrics"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ClusterStateError } from "./cli/errors.js"
import { clusterFileNamed, noClusterMessage, readClusterFile } from "./cluster-file.js"
import { adoptClusterSecurity } from "./cluster-security.js"
import { DEFAULT_CLUSTER, DEFAULT_NATS_URL } from "./commands/common.js"
import { actorIdOf, type RunInput } from "./commands/run.js"
import type { RoleSpec } from "./roles/role.js"

export class NatsUnreachableError extends Data.TaggedError("NatsUnreachableError")<{
  readonly url: string
  readonly reason: string
  readonly fromClusterFile: boolean
}> {
  override get message() {
    const hint = this.fromClusterFile
      ? "is its reef up still running?"
      : "start a cluster with 'reef up', or pass --nats URL"
    return `cannot reach NATS at ${this.url} (${this.reason}): ${hint}`
  }
}

const reasonOf = (error: BusError): string => {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  return String(cause?.code ?? cause?.message ?? "no answer")
}

/** How long a child whose parent died may take to stop cleanly before it exits anyway. */
const ORPHAN_STOP_MS = 15_000

/**
 * A child of `reef up` (or of a test) stops when its parent is gone, even after a SIGKILL that gave the parent
 * no chance to stop it: at once through the parent-death pipe (`watchParent`, @reef/devkit), else by noticing
 * a changed ppid (Linux re-parents an orphan). It stops as on SIGTERM (drain, leave), within ORPHAN_STOP_MS.
 */
const exitWithParent = () => {
  const stop = () => {
    setTimeout(() => process.exit(1), ORPHAN_STOP_MS).unref()
    process.kill(process.pid, "SIGTERM")
  }
  if (watchParent(stop)) return
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer)
      stop()
    }
  }, 1_000)
  timer.unref()
}

export const runRole = (role: RoleSpec<any, any>, input: RunInput) =>
  Effect.suspend(() => {
    if (process.env.REEF_EXIT_WITH_PARENT === "1") exitWithParent()
    const id = actorIdOf(role.role, input)
    const lookup = readClusterFile(input["cluster-file"])
    const file = lookup._tag === "Found" ? lookup.file : undefined
    const named = clusterFileNamed(input["cluster-file"])
    // A cluster file named on purpose that runs nothing is an error, not a reason to try the default NATS URL.
    if (lookup._tag !== "Found" && named !== undefined && input.nats === undefined) {
      return Effect.fail(new ClusterStateError({ message: noClusterMessage(lookup, named) }))
    }
    const natsUrl = input.nats ?? file?.nats.url ?? DEFAULT_NATS_URL
    // Every NATS connection and gRPC server of this process (engine threads included) reads it from the environment.
    adoptClusterSecurity(role.role, input.creds, file)
    const cluster = input.cluster ?? file?.cluster ?? DEFAULT_CLUSTER
    const program = Effect.gen(function* () {
      const presence = yield* PresenceDetails
      yield* Effect.logDebug(`joined cluster ${cluster} through ${natsUrl}`)
      const metricsPort = input["metrics-port"]
      if (metricsPort !== "off") {
        const metrics = yield* serveMetrics({ port: metricsPort, host: input["metrics-host"] })
        // The process's endpoint, announced by the actor it runs for (one Prometheus target per process).
        yield* presence.announce({ metrics: metrics.url }, { role: role.role, id })
      }
      const started = yield* role.start(input, { id, cluster, natsUrl })
      // Runs first when the scope closes (Ctrl-C, SIGTERM): say what stops before it does (a child of
      // `reef up` only with --verbose: its parent already says what it stops).
      const stopping = `stopping ${role.role} ${id}: draining its mailbox, then leaving cluster ${cluster}`
      yield* Effect.addFinalizer(() =>
        process.env.REEF_EXIT_WITH_PARENT === "1" ? Effect.logDebug(stopping) : Effect.logInfo(stopping)
      )
      if (started.endpoints !== undefined) yield* presence.announce(started.endpoints, { role: role.role, id })
      yield* Effect.sync(() => console.log(`${READY_PREFIX} ${started.description} (pid ${process.pid})`))
      return yield* Effect.never
    })
    return program.pipe(
      Effect.scoped,
      Effect.provide(
        Layer.merge(
          natsKernelLayer({ servers: natsUrl, name: `reef-${role.role}-${id}`, connectTimeoutMs: 5_000 }, { cluster }),
          ObservabilityLive({ role: role.role, id })
        )
      ),
      Effect.catchIf(
        (error): error is BusError => error instanceof BusError && error.operation.startsWith("connect"),
        (error) =>
          Effect.fail(
            new NatsUnreachableError({
              url: natsUrl,
              reason: reasonOf(error),
              fromClusterFile: input.nats === undefined && file !== undefined
            })
          )
      ),
      Effect.annotateLogs({ role: role.role, id })
    )
  })
