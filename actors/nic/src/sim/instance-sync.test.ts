/**
 * One POPUC instance in synchronous runs with f <= t: safety at every step, and termination within
 * min(f+2, t+1) rounds ("exactly 2" without failures) for every correct process. 2,400 seeds.
 */
import { describeSeedSuites, type SeedSuite } from "./seed-suite.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "failure-free", seedsPerN: 150 },
  { scenario: "crash", seedsPerN: 225 },
  { scenario: "omission", seedsPerN: 225 }
]

describeSeedSuites("simulated POPUC instance, synchronous, f <= t", suites)
