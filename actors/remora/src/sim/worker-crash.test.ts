import { describeSeedChunks } from "./seed-chunks.js"
import { CI_CRASH_SEEDS_PER_SCENARIO } from "./seed-suite.js"

describeSeedChunks("worker-crash", "Theorem 1, Lemma 8 across re-executions, receipts, committed once, liveness", {
  seeds: CI_CRASH_SEEDS_PER_SCENARIO
})
