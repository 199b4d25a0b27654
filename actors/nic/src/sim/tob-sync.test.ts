/**
 * Total-order broadcast on back-to-back instances, synchronous: failure-free (every instance exactly 2
 * rounds) and crash-stop with restart and rejoin. TOB safety at every step; validity and rejoin at the end.
 * 560 seeds.
 */
import { describeSeedSuites, type SeedSuite } from "./seed-suite.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "tob-failure-free", seedsPerN: 60 },
  { scenario: "tob-crash-restart", seedsPerN: 80 }
]

describeSeedSuites("simulated TOB, synchronous", suites)
