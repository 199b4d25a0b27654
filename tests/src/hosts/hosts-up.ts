/**
 * A whole Reef cluster across N hosts of one machine (`@reef/devkit/hosts`), placed as on N real machines:
 * a NATS cluster with clustered JetStream (one server per host), and on every host i a POPUC replica r<i> of
 * the group kv and an AirDB client a<i> of the store airdb (its streams on three servers); on h1 the gateway
 * gw1 and Remora's coordinator x1, on every other host a worker. Every gRPC port and /metrics endpoint listens
 * on its host's address, so a client (or a Prometheus) anywhere on the bridge reaches it. Issue 29's `reef up --hosts`, as a test-only tool:
 * `pnpm hosts:up` (hosts-up-main.ts) runs it until Ctrl-C; hosts-up.test.ts checks the placement through the
 * gateway.
 */
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startReefChild } from "@reef/devkit"
import { type ClusterHost, startHosts } from "@reef/devkit/hosts"
import * as Effect from "effect/Effect"

export const HOSTS_CLUSTER = "hosts"
export const PORTS = { kv: 7001, airdb: 7301, execution: 7401, gateway: 50051 } as const

export interface HostsUpOptions {
  readonly n: number
  readonly delayMs: number
  readonly jitterMs: number
  readonly say: (line: string) => void
}

export interface PlacedActor {
  readonly role: string
  readonly id: string
  readonly host: ClusterHost
  /** Its client port on its host's address, if it has one. */
  readonly endpoint?: string
  readonly args: ReadonlyArray<string>
}

/** What runs where: the plan, before anything starts. */
export const hostsPlan = (hosts: ReadonlyArray<ClusterHost>, dataDir: string): ReadonlyArray<PlacedActor> => {
  const members = hosts.map((_, i) => `r${i + 1}`).join(",")
  const jsReplicas = String(Math.min(3, hosts.length))
  return hosts.flatMap((host, i): Array<PlacedActor> => {
    const at = (port: number) => `${host.address}:${port}`
    const here = ["--host", host.address]
    return [
      {
        role: "replica",
        id: `r${i + 1}`,
        host,
        endpoint: at(PORTS.kv),
        args: ["--members", members, "--kv-host", host.address, "--kv-port", String(PORTS.kv)]
      },
      {
        role: "airdb",
        id: `a${i + 1}`,
        host,
        endpoint: at(PORTS.airdb),
        args: [...here, "--grpc-port", String(PORTS.airdb), "--js-replicas", jsReplicas]
      },
      ...(i === 0
        ? [
            {
              role: "gateway",
              id: "gw1",
              host,
              endpoint: at(PORTS.gateway),
              args: [...here, "--grpc-port", String(PORTS.gateway)]
            },
            {
              role: "coordinator",
              id: "x1",
              host,
              endpoint: at(PORTS.execution),
              args: [...here, "--execution-port", String(PORTS.execution), "--data-dir", join(dataDir, "x1")]
            }
          ]
        : [{ role: "worker", id: `w${i}`, host, args: ["--coordinator", "x1"] }])
    ]
  })
}

/** Starts the hosts, their NATS cluster and every actor of the plan, in the current scope. */
export const hostsUp = (options: HostsUpOptions) =>
  Effect.gen(function* () {
    const h = yield* startHosts({
      n: options.n,
      delayMs: options.delayMs,
      jitterMs: options.jitterMs,
      jetstream: true,
      say: options.say
    })
    const dataDir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "reef-hosts-up-")))
    const plan = hostsPlan(h.hosts, dataDir)
    yield* Effect.forEach(
      plan,
      (actor) =>
        startReefChild({
          name: `${actor.role}/${actor.id}@${actor.host.name}`,
          args: [
            ...["run", actor.role, "--id", actor.id, "--nats", actor.host.natsUrl, "--cluster", HOSTS_CLUSTER],
            ...["--metrics-host", actor.host.address],
            ...actor.args
          ],
          prefix: actor.host.exec,
          env: { OTEL_SDK_DISABLED: "true" },
          startTimeoutMs: 120_000,
          onLine: () => {}
        }),
      { concurrency: "unbounded" }
    )
    for (const host of h.hosts) {
      const here = plan.filter((a) => a.host === host)
      options.say(
        `${host.name} ${host.address} (nats ${host.natsUrl}): ` +
          here.map((a) => `${a.role}/${a.id}${a.endpoint === undefined ? "" : ` on ${a.endpoint}`}`).join(", ")
      )
    }
    return { hosts: h, plan }
  })
