/**
 * Remora's nemesis, briefly (remora-nemesis.ts): one worker kill -9 + restart, one coordinator kill -9 + restart,
 * one worker SIGSTOP/SIGCONT and one nats-server restart under concurrent signed submitters; every transaction
 * completes with one receipt, seqs are 1..N, the state equals the sequential reference, GetReceipt answers every
 * receipt identically; then the same while the coordinator autoscales 1..3 workers under a load that rises and
 * falls (until it has scaled out and in at least once). The long run: `pnpm test:nemesis remora --minutes N
 * [--elastic]`.
 */
import { describe, expect, it } from "vitest"
import { runRemoraNemesis, summarizeRemora } from "./remora-nemesis.js"

describe("Remora nemesis", () => {
  it("kill -9 of a worker and of the coordinator, a pause, a server restart: nothing lost, nothing twice", async () => {
    const seed = Number(process.env.REMORA_NEMESIS_SEED ?? 7)
    const report = await runRemoraNemesis({ faultsMs: 0, seed, submitters: 3, inFlight: 50 })
    const context = `${summarizeRemora(report)}\n${report.events.join("\n")}`
    expect(report.faults, context).toEqual({
      "worker-kill": 1,
      "coordinator-kill": 1,
      "worker-pause": 1,
      "nats-restart": 1
    })
    expect(report.problems, context).toEqual([])
    expect(report.transactions, context).toBeGreaterThan(500)
    expect(report.coordinatorRestarts, context).toBe(1)
    expect(report.recoveries, context).toBeGreaterThanOrEqual(1)
  }, 600_000)

  it("the same faults while the pool grows and shrinks with the load: nothing lost, nothing twice", async () => {
    const seed = Number(process.env.REMORA_NEMESIS_SEED ?? 8)
    const report = await runRemoraNemesis({ faultsMs: 0, seed, submitters: 3, inFlight: 50, elastic: true })
    const context = `${summarizeRemora(report)}\n${report.events.join("\n")}`
    expect(report.problems, context).toEqual([])
    expect(report.scaleOuts, context).toBeGreaterThanOrEqual(1)
    expect(report.scaleIns, context).toBeGreaterThanOrEqual(1)
    expect(report.coordinatorRestarts, context).toBeGreaterThanOrEqual(1)
  }, 600_000)
})
