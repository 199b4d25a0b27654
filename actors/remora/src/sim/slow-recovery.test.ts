import { describeSeedChunks } from "./seed-chunks.js"
import { CI_CRASH_SEEDS_PER_SCENARIO } from "./seed-suite.js"

describeSeedChunks("slow-recovery", "a replay slower than the stall timeout still completes (liveness)", {
  seeds: CI_CRASH_SEEDS_PER_SCENARIO,
  chunks: 2
})
