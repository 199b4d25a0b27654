/**
 * Issue 29: Remora across hosts. Three hosts with a 3-node NATS cluster (hosts.ts), every route through the
 * link proxy with 1 ms ± 0.1 ms of one-way delay. The coordinator x1 runs on h1 with its execution port on
 * h1's address (`--host`), the workers on h2 and h3, each on its own host's server; the signed submitters run
 * in the test process and reach x1 over the network. Remora's nemesis (remora-nemesis.ts) cuts a worker's host
 * off and heals it, cuts the coordinator's host off and heals it, and kills one host's nats-server, in a seeded
 * order. Its checks are the same as on one machine: every transaction has exactly one receipt, seqs are 1..N,
 * the executed state equals the sequential reference execution, GetReceipt answers every receipt identically.
 * The time from each heal to the next receipt is printed.
 *
 * Skips, saying why, where network namespaces cannot be made (not root, no iproute2).
 */

import { hostsUnavailable, startHosts } from "@reef/devkit/hosts"
import { describe, expect, it } from "vitest"
import type { Harness } from "../harness.js"
import { type RemoraFault, type RemoraSite, runRemoraNemesis, summarizeRemora } from "../remora-nemesis.js"
import { hostServers, placeOnHosts } from "./placement.js"

const unavailable = hostsUnavailable()

/** The coordinator on h1, the workers on h2 and h3 (w1 h2, w2 h3, w3 h2). */
const hostIndexOf = (actor: string) => (actor === "x1" ? 0 : 1 + ((Number(actor.slice(1)) - 1) % 2))

export const remoraHostsSite =
  (seed: number, delayMs: number, jitterMs: number) =>
  async (harness: Harness): Promise<RemoraSite> => {
    const h = await harness.run(startHosts({ n: 3, delayMs, jitterMs, seed, say: (line) => console.log(line) }))
    return {
      placement: placeOnHosts(h, hostIndexOf),
      servers: hostServers(h),
      partition: (actor, cut) => (cut ? h.cut(hostIndexOf(actor)) : h.heal(hostIndexOf(actor))),
      healed: h.routesFormed(60)
    }
  }

describe.skipIf(unavailable !== undefined)(
  `Remora across hosts${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    it("coordinator on h1, workers on h2 and h3, 1 ms links: partitions healed, a server killed; state = reference", async () => {
      const seed = Number(process.env.REMORA_NEMESIS_SEED ?? 29)
      const kinds: ReadonlyArray<RemoraFault> = ["worker-partition", "coordinator-partition", "nats-restart"]
      const report = await runRemoraNemesis({
        faultsMs: 0,
        seed,
        submitters: 3,
        inFlight: 50,
        faultKinds: kinds,
        site: remoraHostsSite(seed, 1, 0.1),
        say: (line) => console.log(line)
      })
      const context = `${summarizeRemora(report)}\n${report.events.join("\n")}`
      console.log(context)
      expect(report.faults, context).toEqual(Object.fromEntries(kinds.map((k) => [k, 1])))
      expect(report.problems, context).toEqual([])
      expect(report.transactions, context).toBeGreaterThan(500)
      expect(report.resumeMs.length, context).toBe(kinds.length)
    }, 600_000)
  }
)
