import { describe, expect, it } from "vitest"
import { runSuiteChunk } from "./seed-suite.js"

const CHUNKS = 4

describe("simulator, scenario symmetric: Theorem 1, Lemma 8, Lemma 4 and Theorem 3 hold", () => {
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    it(`seed chunk ${chunk + 1} of ${CHUNKS}`, () => {
      expect(runSuiteChunk("symmetric", chunk, CHUNKS)).toBe("")
    }, 120_000)
  }
})
