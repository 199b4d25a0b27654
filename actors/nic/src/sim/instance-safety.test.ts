/**
 * One POPUC instance under arbitrary delays, drops and duplicates, with f <= t and with f > t: "Safety
 * (validity, uniform agreement) holds for any number of failures and any message delays"; processes may
 * self-crash but never disagree. 1,400 seeds.
 */
import { describeSeedSuites, type SeedSuite } from "./seed-suite.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "async", seedsPerN: 175 },
  { scenario: "overload", seedsPerN: 175 }
]

describeSeedSuites("simulated POPUC instance, safety only", suites)
