/**
 * Issue 23's nemesis, short enough for CI: three `reef run airdb` clients on JetStream under concurrent
 * list-append workers take one client kill -9, one client SIGSTOP, one nats-server kill -9 and one nats-server
 * SIGSTOP (airdb-nemesis.ts). The history must be strictly serializable, no acknowledged append lost or
 * duplicated, and the clients must agree. `pnpm test:airdb-nemesis --minutes N` runs it for longer.
 */
import { describe, expect, it } from "vitest"
import { runAirDbNemesis, summarizeAirDb } from "./airdb-nemesis.js"

describe("AirDB under a nemesis", () => {
  it("kills and pauses of clients and storage: strictly serializable, nothing acknowledged lost", async () => {
    const seed = Number(process.env.REEF_NEMESIS_SEED ?? 23)
    const report = await runAirDbNemesis({ seed, faultsMs: 0 })
    const context = `${summarizeAirDb(report)}\n${report.events.join("\n")}`
    console.log(context)
    expect(report.faults, context).toEqual({
      "client-kill": 1,
      "client-pause": 1,
      "storage-kill": 1,
      "storage-pause": 1
    })
    expect(report.txns.ok, context).toBeGreaterThan(100)
    expect(report.appends.acknowledged, context).toBeGreaterThan(20)
    expect(
      report.elle.anomalies.slice(0, 3).map((a) => `${a.type}: ${a.explanation}`),
      context
    ).toEqual([])
    expect(report.appends.lost, context).toEqual([])
    expect(report.disagreements, context).toEqual([])
    expect(report.startFailures, context).toEqual([])
  }, 240_000)
})
