import { describe, expect, it } from "vitest"
import { CI_CRASH_SEEDS_PER_SCENARIO, runSuiteChunk } from "./seed-suite.js"

const CHUNKS = 4

describe("simulator, scenario worker-crash: Theorem 1, Lemma 8 across re-executions, receipts, committed once, liveness", () => {
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    it(`seed chunk ${chunk + 1} of ${CHUNKS}`, () => {
      expect(runSuiteChunk("worker-crash", chunk, CHUNKS, CI_CRASH_SEEDS_PER_SCENARIO)).toBe("")
    }, 240_000)
  }
})
