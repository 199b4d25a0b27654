/**
 * The JetStream streams each host's nats-server holds, from its monitoring endpoint (/jsz), with their replica
 * counts: how a test sees that a store really is replicated on every server of the cluster.
 */
import { type Host, NATS_MONITOR_PORT } from "@reef/devkit/hosts"
import * as Effect from "effect/Effect"

interface Jsz {
  readonly account_details?: ReadonlyArray<{
    readonly stream_detail?: ReadonlyArray<{ readonly name: string; readonly config?: { num_replicas?: number } }>
  }>
}

export interface ServerStreams {
  readonly host: string
  readonly streams: number
  /** The distinct replica counts of its streams, ascending. */
  readonly replicas: ReadonlyArray<number>
}

export const streamsPerServer = (hosts: ReadonlyArray<Host>) =>
  Effect.forEach(hosts, (host) =>
    Effect.tryPromise(async (): Promise<ServerStreams> => {
      const url = `http://${host.address}:${NATS_MONITOR_PORT}/jsz?streams=true&config=true`
      const jsz = (await (await fetch(url, { signal: AbortSignal.timeout(5_000) })).json()) as Jsz
      const streams = (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? [])
      const replicas = [...new Set(streams.map((s) => s.config?.num_replicas ?? 0))].sort((a, b) => a - b)
      return { host: host.name, streams: streams.length, replicas }
    })
  )

/** `storage: streams held per server: h1 11 (R3), h2 11 (R3), h3 11 (R3)`. */
export const streamsReport = (hosts: ReadonlyArray<Host>) =>
  Effect.map(
    streamsPerServer(hosts),
    (per) =>
      `storage: streams held per server: ${per.map((s) => `${s.host} ${s.streams} (R${s.replicas.join("/R")})`).join(", ")}`
  )
