import { describe, expect, it } from "vitest"
import { CI_CRASH_SEEDS_PER_SCENARIO, runSuiteChunk } from "./seed-suite.js"

const CHUNKS = 4

describe("simulator, scenario elastic-crash (§4.7): Theorem 1, Lemma 8, Lemma 4, liveness; no work to a retired worker", () => {
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    it(`seed chunk ${chunk + 1} of ${CHUNKS}`, () => {
      expect(runSuiteChunk("elastic-crash", chunk, CHUNKS, CI_CRASH_SEEDS_PER_SCENARIO)).toBe("")
    }, 120_000)
  }
})
