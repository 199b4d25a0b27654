import { describe, expect, it } from "vitest"
import { runSuiteChunk } from "./seed-suite.js"

const CHUNKS = 4

describe("simulator, scenario elastic (§4.7): Theorem 1, Lemma 8, Lemma 4, liveness; no work to a retired worker", () => {
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    it(`seed chunk ${chunk + 1} of ${CHUNKS}`, () => {
      expect(runSuiteChunk("elastic", chunk, CHUNKS)).toBe("")
    }, 120_000)
  }
})
