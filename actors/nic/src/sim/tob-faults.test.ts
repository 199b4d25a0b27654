/**
 * Total-order broadcast with transient omissions (excluded replicas self-crash and rejoin), and under
 * asynchrony with any number of faults (safety only). 600 seeds.
 */
import { describeSeedSuites, type SeedSuite } from "./seed-suite.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "tob-omission", seedsPerN: 75 },
  { scenario: "tob-async", seedsPerN: 75 }
]

describeSeedSuites("simulated TOB, omissions and asynchrony", suites)
