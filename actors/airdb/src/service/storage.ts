/** Opening the segment store a role or a benchmark names: a backend and where it is. */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { MemorySegments, makeMemorySegmentStore } from "../segment/memory.js"
import { type SegmentStoreShape, SegmentUnavailable } from "../segment/segment.js"

export const BACKENDS = ["jetstream", "redis", "azure", "memory"] as const
export type Backend = (typeof BACKENDS)[number]

export interface StorageOptions {
  readonly backend: Backend
  /** JetStream: the NATS server. */
  readonly natsUrl?: string
  /** JetStream: copies of each segment on a NATS cluster (1 by default). */
  readonly jetstreamReplicas?: number
  /** Redis: host and port. */
  readonly redisHost?: string
  readonly redisPort?: number
  /** Azure: a connection string (Azurite's for tests) and the container. */
  readonly azureConnectionString?: string
  readonly azureContainer?: string
  /** Deadline of one storage call. */
  readonly timeoutMs?: number
}

export class StorageConfigError extends Error {}

/**
 * Opens the named backend. Each backend's client library is loaded only when used: a process that talks to
 * JetStream never loads the Azure SDK (a cold start counts every module it loads).
 */
export const openSegmentStore = (
  o: StorageOptions
): Effect.Effect<SegmentStoreShape, SegmentUnavailable | StorageConfigError, Scope.Scope> => {
  const timeout = o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }
  switch (o.backend) {
    case "jetstream": {
      const natsUrl = o.natsUrl
      if (natsUrl === undefined) return Effect.fail(new StorageConfigError("jetstream needs a NATS url"))
      return Effect.flatMap(
        Effect.promise(() => import("../segment/jetstream.js")),
        (m) =>
          m.jetStreamSegmentStore({
            servers: natsUrl,
            ...(o.jetstreamReplicas === undefined ? {} : { replicas: o.jetstreamReplicas }),
            ...timeout
          })
      )
    }
    case "redis": {
      const port = o.redisPort
      if (port === undefined) return Effect.fail(new StorageConfigError("redis needs a port"))
      return Effect.flatMap(
        Effect.promise(() => import("../segment/redis.js")),
        (m) => m.redisSegmentStore({ port, ...(o.redisHost === undefined ? {} : { host: o.redisHost }), ...timeout })
      )
    }
    case "azure": {
      const connectionString = o.azureConnectionString
      if (connectionString === undefined) return Effect.fail(new StorageConfigError("azure needs a connection string"))
      return Effect.flatMap(
        Effect.promise(() => import("../segment/azure.js")),
        (m) =>
          m.azureSegmentStore({
            connectionString,
            ...(o.azureContainer === undefined ? {} : { container: o.azureContainer }),
            ...timeout
          })
      )
    }
    case "memory":
      return Effect.sync(() => makeMemorySegmentStore(new MemorySegments()))
  }
}

/**
 * The store with a share of its calls failing before they happen (SegmentUnavailable): the chaos benchmark's
 * "0.1% of storage calls fail". `random` in [0, 1) decides each call.
 */
export const withFailures = (store: SegmentStoreShape, rate: number, random: () => number): SegmentStoreShape => {
  if (rate <= 0) return store
  const maybeFail = <A, E>(segment: string, operation: string, call: Effect.Effect<A, E>) =>
    Effect.suspend(
      (): Effect.Effect<A, E | SegmentUnavailable> =>
        random() < rate
          ? Effect.fail(new SegmentUnavailable({ segment, operation, reason: "injected storage failure" }))
          : call
    )
  return {
    ...store,
    create: (s) => maybeFail(s, "create", store.create(s)),
    append: (s, t, b) => maybeFail(s, "append", store.append(s, t, b)),
    read: (s, f, o) => maybeFail(s, "read", store.read(s, f, o)),
    size: (s) => maybeFail(s, "size", store.size(s)),
    remove: (s) => maybeFail(s, "remove", store.remove(s))
  }
}
