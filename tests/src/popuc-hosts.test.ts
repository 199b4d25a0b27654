/**
 * Issue 29: POPUC across hosts. Three hosts (network namespaces on a bridge, `@reef/devkit/hosts`), a 3-node
 * NATS cluster with one server per host, every route through the link proxy with 1 ms ± 0.1 ms of one-way
 * delay, and a 3-replica group with one replica per host, each on its own host's server. The nemesis of
 * popuc-nemesis.ts runs with concurrent clients and, in a seeded order: a host cut off at the proxy and healed
 * (ΔI calibrated at bootstrap over the delayed links, as in production), a host's link down and up (its
 * clients cut off too), a host flapping (cut and healed 4-8 times, 0.2-1.5 s each way), a kill -9 and restart
 * of a replica on its host, and a kill -9 of one host's nats-server. The history must be linearizable, no
 * acknowledged write lost, the states converged; the time from each heal until the replica served and caught
 * up is printed, with the delay the proxy really added.
 *
 * Skips, saying why, where network namespaces cannot be made (not root, no iproute2).
 */

import { hostsUnavailable, type ProxyStats, startHosts } from "@reef/devkit/hosts"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { Harness } from "./harness.js"
import { type FaultKind, type NemesisSite, runNemesis, safetyOf, summarize } from "./popuc-nemesis.js"

const unavailable = hostsUnavailable()
const DELAY_MS = 1
const JITTER_MS = 0.1

const describeHosts = describe.skipIf(unavailable !== undefined)
const title = `POPUC across hosts${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`

/** The nemesis's site: the hosts, one replica per host on its host's server. */
const hostsSite =
  (seed: number) =>
  async (harness: Harness): Promise<NemesisSite> => {
    const h = await harness.run(
      startHosts({ n: 3, delayMs: DELAY_MS, jitterMs: JITTER_MS, seed, say: (line) => console.log(line) })
    )
    return {
      natsUrl: h.hosts[0]!.natsUrl,
      servers: h.servers.map((s) => ({ name: `nats-server@${s.host}`, kill: s.kill, restart: s.restart })),
      placement: (index) => {
        const host = h.hosts[index]!
        console.log(`r${index + 1} runs on ${host.name} (${host.address}), NATS ${host.natsUrl}`)
        return { natsUrl: host.natsUrl, address: host.address, prefix: host.exec }
      },
      cutOff: {
        partition: (index, cut) => (cut ? h.cut(index) : h.heal(index)),
        isolate: (index, cut) => h.network.setLink(index, !cut)
      },
      healed: h.routesFormed(60),
      measure: {
        reset: h.resetProxyStats,
        report: Effect.map(h.proxyStats, describeProxy)
      }
    }
  }

const describeProxy = (s: ProxyStats) =>
  `link proxy: asked ${DELAY_MS} ms ± ${JITTER_MS} ms one way; held ${s.chunks} chunks (${(s.bytes / 1e6).toFixed(1)} MB) ` +
  `for p50 ${s.heldMs.p50.toFixed(2)} ms, p99 ${s.heldMs.p99.toFixed(2)} ms, max ${s.heldMs.max.toFixed(1)} ms; ` +
  `${s.refused} connections refused while cut`

describeHosts(title, () => {
  it("3 hosts, 3-node NATS cluster, 1 ms links: partition, link down, flapping, kill, server kill; linearizable", async () => {
    const seed = Number(process.env.REEF_NEMESIS_SEED ?? 29)
    const kinds: ReadonlyArray<FaultKind> = ["partition", "isolate", "flap", "kill", "nats-restart"]
    const report = await runNemesis({
      faultsMs: 0,
      seed,
      site: hostsSite(seed),
      faultKinds: kinds,
      // ΔI calibrated with the peers over the delayed links, as a production replica does.
      calibrate: true,
      say: (line) => console.log(line)
    })
    const context = `${summarize(report)}\n${report.events.join("\n")}`
    console.log(context)
    expect(report.faults, context).toEqual(Object.fromEntries(kinds.map((k) => [k, 1])))
    expect(report.operations.answered, context).toBeGreaterThan(100)
    // The cut hosts' clients saw failures (or the faults hit nothing).
    expect(report.operations.unknown + report.operations.failed, context).toBeGreaterThan(0)
    expect(safetyOf(report), context).toEqual({ linearizability: "linearizable", lostWrites: [], stateHashes: 1 })
  }, 300_000)
})
