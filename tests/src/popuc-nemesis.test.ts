/**
 * Issue 11's nemesis, short enough for CI: a 3-replica group under concurrent clients takes one kill -9 and
 * restart, one SIGSTOP/SIGCONT, one restart served by a snapshot and one nats-server restart (popuc-nemesis.ts).
 * The history must be linearizable with unknown outcomes for failed calls, no acknowledged write may be lost,
 * and the replicas' states must converge. `pnpm test:nemesis --minutes N` runs the same for longer.
 */
import { describe, expect, it } from "vitest"
import { runNemesis, safetyOf, summarize } from "./popuc-nemesis.js"

describe("POPUC under a nemesis", () => {
  it("kills, pauses, a snapshot rejoin and a server restart: linearizable, nothing acknowledged lost", async () => {
    const seed = Number(process.env.REEF_NEMESIS_SEED ?? 11)
    const report = await runNemesis({ faultsMs: 0, seed })
    const context = `${summarize(report)}\n${report.events.join("\n")}`
    console.log(context)
    expect(report.faults, context).toEqual({ kill: 1, pause: 1, "snapshot-restart": 1, "nats-restart": 1 })
    // The snapshot path ran, as the restarted replica's own stats say.
    const snapshotRestart = report.recoveries.find((r) => r.fault === "snapshot-restart")
    expect(snapshotRestart?.snapshot, context).toBe(true)
    // Clients made progress, and some calls did fail while the faults were on (or the faults hit nothing).
    expect(report.operations.answered, context).toBeGreaterThan(100)
    expect(report.operations.unknown + report.operations.failed, context).toBeGreaterThan(0)
    expect(safetyOf(report), context).toEqual({ linearizability: "linearizable", lostWrites: [], stateHashes: 1 })
  }, 170_000)
})
