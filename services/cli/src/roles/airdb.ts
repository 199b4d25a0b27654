/**
 * `reef run airdb`: one AirDB client process serving reef.v1.AirDB (serverless SMR: its state lives only on the
 * shared log, so any number of them can run and any can be killed). `reef up --with airdb` starts one on the
 * cluster's embedded JetStream.
 */
import * as Effect from "effect/Effect"
import { Opt } from "../cli/spec.js"
import { listenHostOption } from "./listen-host.js"
import { defineRole } from "./role.js"
import { ROLE_STATUS_COLUMNS } from "./status-columns.js"

/** gRPC port of `reef up`'s AirDB client a1. */
export const DEFAULT_AIRDB_PORT = 7301

export const airdbRole = defineRole({
  role: "airdb",
  summary: "AirDB client serving the transactional KV store reef.v1.AirDB from a shared log (JetStream, Redis, Azure)",
  description:
    "A transactional key-value store on serverless state machine replication: commands and snapshots live only " +
    "on shared storage; this process is one client of it (a bounded cache, a bus-stand tail sync, write " +
    "batching, and its share of snapshotting). Every client of the same --store on the same storage (backend and " +
    "server) sees the same data, and any number of them can run; killing one loses nothing. A store is its name on " +
    "its storage: --backend redis is other storage than the cluster's JetStream, so its --store airdb is a " +
    "separate store with its own data. JetStream defaults to the cluster's NATS server.",
  options: {
    backend: Opt.choice({
      description: "shared storage",
      choices: ["jetstream", "redis", "azure"],
      default: "jetstream"
    }),
    store: Opt.token({ description: "store name (its segments' prefix)", default: "airdb" }),
    "js-replicas": Opt.integer({
      description: "--backend jetstream: copies of each new segment on a NATS cluster (3: survives a server's loss)",
      default: 1,
      min: 1,
      max: 5
    }),
    "grpc-port": Opt.port({ description: "gRPC port of reef.v1.AirDB (0: a free one)", default: 0 }),
    host: listenHostOption("--grpc-port"),
    isolation: Opt.choice({
      description: "isolation of this client's transactions",
      choices: ["serializable", "snapshot"],
      default: "serializable"
    }),
    "redis-host": Opt.text({ description: "Redis host (--backend redis)", default: "127.0.0.1" }),
    "redis-port": Opt.port({ description: "Redis port (--backend redis)", default: 6379 }),
    "azure-connection-string": Opt.text({
      description: "Azure storage connection string (--backend azure; Azurite's for a local emulator)",
      defaultText: "none"
    }),
    "azure-container": Opt.token({ description: "Azure container (--backend azure)", default: "airdb" }),
    "cache-mb": Opt.integer({ description: "snapshot blocks this client caches, in MiB", default: 64, min: 1 })
  },
  examples: [
    "reef run airdb --id a1 --grpc-port 7301",
    "reef run airdb --id a2 --backend redis --redis-port 6380 --store orders"
  ],
  validate: (input) =>
    input.backend === "azure" && input["azure-connection-string"] === undefined
      ? "--backend azure needs --azure-connection-string"
      : undefined,
  start: (input, context) =>
    Effect.gen(function* () {
      const { runAirDb } = yield* Effect.promise(() => import("@reef/airdb"))
      const handle = yield* runAirDb({
        id: context.id,
        store: input.store,
        storage: {
          backend: input.backend,
          natsUrl: context.natsUrl,
          jetstreamReplicas: input["js-replicas"],
          redisHost: input["redis-host"],
          redisPort: input["redis-port"],
          azureContainer: input["azure-container"],
          ...(input["azure-connection-string"] === undefined
            ? {}
            : { azureConnectionString: input["azure-connection-string"] })
        },
        grpcPort: input["grpc-port"],
        grpcHost: input.host,
        isolation: input.isolation,
        cacheBytes: input["cache-mb"] * 1024 * 1024
      })
      const s = handle.client.stats()
      return {
        description:
          `airdb ${context.id} on ${handle.grpcAddress} store ${input.store} (${input.backend}), ` +
          `cold start ${handle.coldStartMs} ms, ${s.entries} entries, chain end ${s.chainEnd}`
        // runAirDb announces its grpc endpoint itself.
      }
    }),
  up: {
    byDefault: false,
    options: {
      "airdb-port": Opt.port({ description: "gRPC port of the AirDB client a1", default: DEFAULT_AIRDB_PORT })
    },
    plan: (input) => [{ role: "airdb", id: "a1", args: [], ports: { "grpc-port": input["airdb-port"] } }]
  },
  status: ROLE_STATUS_COLUMNS.airdb
})
