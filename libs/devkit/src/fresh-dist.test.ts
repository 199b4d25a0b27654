import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { BUNDLE_ENTRY, freshBuild } from "./fresh-dist.js"

const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** A workspace of one package `pkg`, its source and its build stamped at the given times (seconds). */
const workspace = (times: {
  readonly source: number
  readonly test?: number
  readonly build?: number
  readonly bundle?: number
}) => {
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
  if (times.bundle !== undefined) {
    mkdirSync(dirname(join(root, BUNDLE_ENTRY)), { recursive: true })
    stamp(join(root, BUNDLE_ENTRY), times.bundle)
  }
  return root
}

describe("freshBuild", () => {
  it("is the dist when the build is newer than every source and there is no bundle", () => {
    expect(freshBuild(workspace({ source: 1_000, build: 2_000 }))).toBe("dist")
  })

  it("is the bundle when it was written after the build", () => {
    expect(freshBuild(workspace({ source: 1_000, build: 2_000, bundle: 2_000 }))).toBe("bundle")
  })

  it("is the dist when the build is newer than the bundle (tsc -b without bundling)", () => {
    expect(freshBuild(workspace({ source: 1_000, build: 3_000, bundle: 2_000 }))).toBe("dist")
  })

  it("is none when a source changed after the build, whatever the bundle", () => {
    expect(freshBuild(workspace({ source: 3_000, build: 2_000, bundle: 4_000 }))).toBeUndefined()
  })

  it("ignores test files edited since the build (processes never run them)", () => {
    expect(freshBuild(workspace({ source: 1_000, test: 3_000, build: 2_000 }))).toBe("dist")
  })

  it("is none when there is no build at all", () => {
    expect(freshBuild(workspace({ source: 1_000 }))).toBeUndefined()
  })
})
