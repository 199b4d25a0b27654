/**
 * The real engine loop and rejoin core under kill -9 and restart as new incarnations, stalls of one process
 * or the whole machine, partitions that collapse the group, and asynchrony with a wrong transport. A few seeds
 * per N here (each run steps every process's real shell); `pnpm sim popuc --scenario shell-... --seeds 1000`
 * runs thousands.
 */
import { describe, expect, it } from "vitest"
import { describeSeedSuites, type SeedSuite } from "./seed-suite.js"
import { runShellSim } from "./shell-sim.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "shell-crash-restart", seedsPerN: 4 },
  { scenario: "shell-stall", seedsPerN: 3 },
  { scenario: "shell-partition", seedsPerN: 3 },
  { scenario: "shell-async", seedsPerN: 6 }
]

describeSeedSuites("simulated replica shells: engine loop and rejoin", suites)

describe("simulated replica shells: regressions", () => {
  it("a host never installs a snapshot older than what it applied since the ask (shell-async, N = 3, seed 64)", () => {
    // The answer named a snapshot at instance 7; by the time it was installed the host had applied up to 10, and
    // serving after the install meant serving a state behind its join instance ("ready").
    expect(runShellSim("shell-async", 64, { n: 3 }).violation).toBeUndefined()
  })

  it("live replicas never apply different values at one instance (shell-async, N = 3, seeds 1116 and 2338)", () => {
    // 1116: a self-quit engine re-entered the attempt it quit and sent a second, different round-1 message.
    for (const seed of [1116, 2338]) expect(runShellSim("shell-async", seed, { n: 3 }).violation).toBeUndefined()
  })

  it("an engine that rejoins as a learner is ready from where it took part again (shell-async, N = 3, seed 5459)", () => {
    // A Join sent while the engine still took part was ignored; serving counts from the learner's instance.
    expect(runShellSim("shell-async", 5459, { n: 3 }).violation).toBeUndefined()
  })

  it("a decision only a killed lone decider had is counted as lost, not applied twice (shell-async, N = 3, seed 416)", () => {
    const r = runShellSim("shell-async", 416, { n: 3 })
    expect(r.violation).toBeUndefined()
    expect(r.stats.lostDecisions).toBe(1)
  })
})
