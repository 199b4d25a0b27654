import { describe, expect, it } from "vitest"
import { CI_CRASH_SEEDS_PER_SCENARIO, runSuiteChunk } from "./seed-suite.js"

const CHUNKS = 2

describe("simulator, scenario slow-recovery: a replay slower than the stall timeout still completes (liveness)", () => {
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    it(`seed chunk ${chunk + 1} of ${CHUNKS}`, () => {
      expect(runSuiteChunk("slow-recovery", chunk, CHUNKS, CI_CRASH_SEEDS_PER_SCENARIO)).toBe("")
    }, 240_000)
  }
})
