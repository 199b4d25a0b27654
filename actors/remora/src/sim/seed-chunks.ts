/**
 * One scenario's CI seeds as a vitest suite: the seeds split into chunks, one test each (so a slow chunk shows),
 * each failing with every violation's description and replay command. Test files only (it imports vitest).
 */
import { describe, expect, it } from "vitest"
import { CI_SEEDS_PER_SCENARIO, runSuiteChunk } from "./seed-suite.js"

export const describeSeedChunks = (
  scenario: string,
  checks: string,
  options: { readonly seeds?: number; readonly chunks?: number; readonly timeoutMs?: number } = {}
): void => {
  const chunks = options.chunks ?? 4
  describe(`simulator, scenario ${scenario}: ${checks}`, () => {
    for (let chunk = 0; chunk < chunks; chunk++) {
      it(
        `seed chunk ${chunk + 1} of ${chunks}`,
        () => {
          expect(runSuiteChunk(scenario, chunk, chunks, options.seeds ?? CI_SEEDS_PER_SCENARIO)).toBe("")
        },
        options.timeoutMs ?? 240_000
      )
    }
  })
}
