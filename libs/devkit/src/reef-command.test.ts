import { describe, expect, it } from "vitest"
import { allocatorEnv, JEMALLOC_CONF, JEMALLOC_PATHS } from "./reef-command.js"

const library = JEMALLOC_PATHS[0]!
const installed = (path: string) => path === library
const onLinux = process.platform === "linux"

describe.runIf(onLinux)("allocatorEnv", () => {
  it("preloads jemalloc with its decay settings when the machine has it", () => {
    expect(allocatorEnv({}, installed)).toEqual({ LD_PRELOAD: library, MALLOC_CONF: JEMALLOC_CONF })
  })

  it("keeps glibc's malloc when jemalloc is not installed", () => {
    expect(allocatorEnv({}, () => false)).toEqual({})
  })

  it("keeps glibc's malloc when asked to (REEF_MALLOC=system)", () => {
    expect(allocatorEnv({ REEF_MALLOC: "system" }, installed)).toEqual({})
  })

  it("adds to a preload already set, and keeps the user's MALLOC_CONF", () => {
    expect(allocatorEnv({ LD_PRELOAD: "/opt/lib/trace.so", MALLOC_CONF: "narenas:4" }, installed)).toEqual({
      LD_PRELOAD: `${library}:/opt/lib/trace.so`,
      MALLOC_CONF: "narenas:4"
    })
  })

  it("leaves a jemalloc that is already preloaded alone (a child of a child inherits it)", () => {
    expect(allocatorEnv({ LD_PRELOAD: library }, installed)).toEqual({})
  })
})
