import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { distIsFresh } from "./fresh-dist.js"

const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** A workspace of one package `pkg`, its source and its build stamped at the given times (seconds). */
const workspace = (times: { readonly source: number; readonly test?: number; readonly build?: number }) => {
  const root = mkdtempSync(join(tmpdir(), "reef-fresh-dist-"))
  roots.push(root)
  writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ files: [], references: [{ path: "pkg" }] }))
  mkdirSync(join(root, "pkg", "src", "deep"), { recursive: true })
  const stamp = (path: string, seconds: number) => {
    writeFileSync(path, "")
    utimesSync(path, seconds, seconds)
  }
  stamp(join(root, "pkg", "src", "deep", "a.ts"), times.source)
  if (times.test !== undefined) stamp(join(root, "pkg", "src", "a.test.ts"), times.test)
  if (times.build !== undefined) {
    mkdirSync(join(root, "pkg", "dist"))
    stamp(join(root, "pkg", "dist", ".tsbuildinfo"), times.build)
  }
  return root
}

describe("distIsFresh", () => {
  it("is fresh when the build is newer than every source", () => {
    expect(distIsFresh(workspace({ source: 1_000, build: 2_000 }))).toBe(true)
  })

  it("is stale when a source changed after the build", () => {
    expect(distIsFresh(workspace({ source: 3_000, build: 2_000 }))).toBe(false)
  })

  it("ignores test files edited since the build (children never run them)", () => {
    expect(distIsFresh(workspace({ source: 1_000, test: 3_000, build: 2_000 }))).toBe(true)
  })

  it("is stale when there is no build at all", () => {
    expect(distIsFresh(workspace({ source: 1_000 }))).toBe(false)
  })
})
