import { describeSeedChunks } from "./seed-chunks.js"
import { CI_CRASH_SEEDS_PER_SCENARIO } from "./seed-suite.js"

describeSeedChunks("elastic-crash", "(§4.7) Theorem 1, Lemma 8, Lemma 4, liveness; no work to a retired worker", {
  seeds: CI_CRASH_SEEDS_PER_SCENARIO
})
