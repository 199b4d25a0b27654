import type { Output } from "@reef/devkit/output"
import { makeStyle } from "@reef/devkit/output"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { makePhases } from "./phases.js"

const recording = (live: boolean) => {
  const lines: Array<string> = []
  const statuses: Array<string> = []
  const out: Output = { style: makeStyle(false), live, line: (t) => lines.push(t), status: (t) => statuses.push(t) }
  return { out, lines, statuses }
}

describe("benchmark phases", () => {
  it("announces each phase with a plain line, and on a terminal a status line it clears when done", async () => {
    const tty = recording(true)
    const phases = makePhases("popuc", 2, tty.out)
    expect(await Effect.runPromise(phases.phase("engine", Effect.succeed(1)))).toBe(1)
    await Effect.runPromise(phases.phase("rejoin", Effect.void))
    phases.done()
    expect(tty.lines).toEqual(["popuc [1/2] engine", "popuc [2/2] rejoin"])
    expect(tty.statuses).toContain("popuc [2/2] rejoin: 0 s")
    expect(tty.statuses.at(-1)).toBe("")
  })

  it("prints only the plain lines without a terminal", async () => {
    const log = recording(false)
    const phases = makePhases("popuc", 1, log.out)
    await Effect.runPromise(phases.phase("engine", Effect.void))
    phases.done()
    expect(log.lines).toEqual(["popuc [1/1] engine"])
    expect(log.statuses.filter((s) => s !== "")).toEqual([])
  })
})
