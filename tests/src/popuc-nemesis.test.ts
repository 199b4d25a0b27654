/**
 * Issue 11's nemesis, short enough for CI: a 3-replica group under concurrent clients takes one kill -9 and
 * restart, one SIGSTOP/SIGCONT, one restart served by a snapshot and one nats-server restart (popuc-nemesis.ts).
 * The history must be linearizable with unknown outcomes for failed calls, no acknowledged write may be lost,
 * and the replicas' states must converge. `pnpm test:nemesis --minutes N` runs the same for longer.
 */
import { formatEntry, formatLostWrite } from "@reef/replica"
import { describe, expect, it } from "vitest"
import { runNemesis, summarize } from "./popuc-nemesis.js"

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
    const verdict = report.linearizability
    expect(
      verdict.ok ? "linearizable" : `${verdict.reason}\n${verdict.minimalWindow.map(formatEntry).join("\n")}`,
      context
    ).toBe("linearizable")
    expect(report.lostWrites.map(formatLostWrite), context).toEqual([])
    expect(new Set(report.states.map((s) => s.stateHash)).size, context).toBe(1)
  }, 170_000)
})
