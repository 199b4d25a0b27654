/**
 * The nemesis of popuc-nemesis.test.ts with authentication and TLS on, as `reef up --secure` runs a cluster:
 * the replicas connect to NATS over mutual TLS with the replica identity and its permissions, and serve KV over
 * TLS behind a bearer token. Kills, a pause, a snapshot rejoin and a server restart must still leave a
 * linearizable history with nothing acknowledged lost (reconnects re-authenticate).
 */
import { describe, expect, it } from "vitest"
import { runNemesis, safetyOf, summarize } from "./popuc-nemesis.js"

describe("POPUC under a nemesis, with authentication and TLS", () => {
  it("linearizable, nothing acknowledged lost, states converge", async () => {
    const seed = Number(process.env.REEF_NEMESIS_SEED ?? 28)
    const report = await runNemesis({ faultsMs: 0, seed, secure: true })
    const context = `${summarize(report)}\n${report.events.join("\n")}`
    console.log(context)
    expect(report.faults, context).toEqual({ kill: 1, pause: 1, "snapshot-restart": 1, "nats-restart": 1 })
    expect(report.operations.answered, context).toBeGreaterThan(100)
    expect(safetyOf(report), context).toEqual({ linearizability: "linearizable", lostWrites: [], stateHashes: 1 })
  }, 170_000)
})
