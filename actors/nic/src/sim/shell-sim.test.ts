/**
 * The real engine loop and rejoin core under kill -9 and restart as new incarnations, stalls of one process
 * or the whole machine, partitions that collapse the group, and asynchrony with a wrong transport. A few seeds
 * per N here (each run steps every process's real shell); `pnpm sim popuc --scenario shell-... --seeds 1000`
 * runs thousands.
 */
import { describeSeedSuites, type SeedSuite } from "./seed-suite.js"

const suites: ReadonlyArray<SeedSuite> = [
  { scenario: "shell-crash-restart", seedsPerN: 4 },
  { scenario: "shell-stall", seedsPerN: 3 },
  { scenario: "shell-partition", seedsPerN: 3 },
  { scenario: "shell-async", seedsPerN: 6 }
]

describeSeedSuites("simulated replica shells: engine loop and rejoin", suites)
