/**
 * Issue 29: AirDB across hosts. Three hosts with a 3-node NATS cluster running clustered JetStream (hosts.ts),
 * every route through the link proxy with 1 ms ± 0.1 ms of one-way delay. One `reef run airdb` client per
 * host, on its own host's server, its gRPC port on the host's address (`--host`), its store's segments
 * replicated on all three servers (`--js-replicas 3`). AirDB's nemesis (airdb-nemesis.ts) runs its list-append
 * workers from the test process against the three clients and, in a seeded order: cuts a client's host off at
 * the link proxy (its nats-server with it) and heals it, kills one server of the cluster with kill -9 and
 * restarts it on its store, SIGSTOPs one server, and kills a client. Its checks are the same as on one machine:
 * the history is strictly serializable (the Elle-style checker), no acknowledged append is lost or doubled,
 * every client reads the same final lists.
 *
 * Skips, saying why, where network namespaces cannot be made (not root, no iproute2).
 */

import { hostsUnavailable, startHosts } from "@reef/devkit/hosts"
import { describe, expect, it } from "vitest"
import { type AirDbFault, type AirDbSite, airDbSafety, runAirDbNemesis, summarizeAirDb } from "../airdb-nemesis.js"
import type { Harness } from "../harness.js"
import { streamsReport } from "./jetstream-streams.js"
import { hostServers, placeOnHosts } from "./placement.js"

const unavailable = hostsUnavailable()

/** Client a<i> on host h<i>. */
const hostIndexOf = (client: string) => Number(client.slice(1)) - 1

export const airdbHostsSite =
  (seed: number, delayMs: number, jitterMs: number) =>
  async (harness: Harness): Promise<AirDbSite> => {
    const h = await harness.run(
      startHosts({ n: 3, delayMs, jitterMs, seed, jetstream: true, say: (line) => console.log(line) })
    )
    return {
      placement: placeOnHosts(h, hostIndexOf),
      clientArgs: ["--js-replicas", "3"],
      servers: hostServers(h),
      partition: (client, cut) => (cut ? h.cut(hostIndexOf(client)) : h.heal(hostIndexOf(client))),
      healed: h.routesFormed(60),
      report: streamsReport(h.hosts)
    }
  }

describe.skipIf(unavailable !== undefined)(
  `AirDB across hosts${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    it("a client per host on clustered JetStream (R3), 1 ms links: partition, server kill and pause; strictly serializable", async () => {
      const seed = Number(process.env.REEF_NEMESIS_SEED ?? 29)
      const kinds: ReadonlyArray<AirDbFault> = ["client-partition", "storage-kill", "storage-pause", "client-kill"]
      const report = await runAirDbNemesis({
        seed,
        faultsMs: 0,
        faultKinds: kinds,
        site: airdbHostsSite(seed, 1, 0.1),
        say: (line) => console.log(line)
      })
      const context = `${summarizeAirDb(report)}\n${report.events.join("\n")}`
      console.log(context)
      expect(report.faults, context).toEqual(Object.fromEntries(kinds.map((k) => [k, 1])))
      // Every segment is on every server: the store survived a server's loss because it was replicated.
      const storage = report.events.find((line) => line.includes("storage: streams held per server"))
      expect(storage, context).toMatch(/h1 [1-9]\d* \(R3\), h2 [1-9]\d* \(R3\), h3 [1-9]\d* \(R3\)$/)
      expect(report.txns.ok, context).toBeGreaterThan(100)
      expect(report.appends.acknowledged, context).toBeGreaterThan(20)
      expect(airDbSafety(report), context).toEqual({ anomalies: [], lost: [], disagreements: [], startFailures: [] })
    }, 600_000)
  }
)
