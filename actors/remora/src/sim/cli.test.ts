import { afterEach, describe, expect, it, vi } from "vitest"
import { REMORA_SIM_USAGE, runRemoraSim } from "./cli.js"

describe("pnpm sim remora", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("--help prints the usage and succeeds", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {})
    expect(runRemoraSim(["--help"])).toBe(0)
    expect(log).toHaveBeenCalledWith(REMORA_SIM_USAGE)
    expect(REMORA_SIM_USAGE).toContain("worker-crash")
    expect(REMORA_SIM_USAGE).toContain("volatile-seen-ids")
  })

  it("a bad argument is an error with the usage, not a run", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {})
    expect(runRemoraSim(["--scenario", "no-such"])).toBe(2)
    expect(error.mock.calls[0]?.[0]).toContain("unknown scenario no-such")
  })

  it("replays one crash seed and prints its table", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {})
    expect(runRemoraSim(["--scenario", "crash-chaos", "--seed", "27"])).toBe(0)
    expect(log.mock.calls.map((c) => String(c[0])).join("\n")).toMatch(/crash-chaos +1 +0 /)
  })
})
