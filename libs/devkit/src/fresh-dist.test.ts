import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { BUNDLE_ENTRY, freshBuild } from "./fresh-dist.js"

const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/**
 * A workspace of the CLI (services/cli) referencing one package `pkg`, with `pkg`'s source and both builds
 * stamped at the given times (seconds), and a benchmark package the CLI does not reference.
 */
const workspace = (times: {
  readonly source: number
  readonly test?: number
  readonly build?: number
  readonly bundle?: number
  readonly benchBuild?: number
}) => {
  const root = mkdtempSync(join(tmpdir(), "reef-fresh-dist-"))
  roots.push(root)
  const stamp = (path: string, seconds: number) => {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, "")
    utimesSync(path, seconds, seconds)
  }
  const cli = join(root, "services", "cli")
  mkdirSync(cli, { recursive: true })
  const packages = [{ path: "pkg" }, { path: "services/cli" }, { path: "bench" }]
  writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ files: [], references: packages }))
  writeFileSync(join(cli, "tsconfig.json"), JSON.stringify({ references: [{ path: "../../pkg" }] }))
  stamp(join(root, "pkg", "src", "deep", "a.ts"), times.source)
  writeFileSync(join(root, "pkg", "tsconfig.json"), JSON.stringify({}))
  stamp(join(cli, "src", "main.ts"), 0)
  stamp(join(root, "bench", "src", "main.ts"), times.benchBuild ?? 0)
  writeFileSync(join(root, "bench", "tsconfig.json"), JSON.stringify({}))
  if (times.test !== undefined) stamp(join(root, "pkg", "src", "a.test.ts"), times.test)
  if (times.build !== undefined) {
    stamp(join(root, "pkg", "dist", ".tsbuildinfo"), times.build)
    stamp(join(cli, "dist", ".tsbuildinfo"), times.build)
  }
  if (times.benchBuild !== undefined) stamp(join(root, "bench", "dist", ".tsbuildinfo"), times.benchBuild)
  if (times.bundle !== undefined) stamp(join(root, BUNDLE_ENTRY), times.bundle)
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

  it("stays the bundle after a build of packages the CLI does not reference (tsc -b bench)", () => {
    expect(freshBuild(workspace({ source: 1_000, build: 2_000, bundle: 2_000, benchBuild: 3_000 }))).toBe("bundle")
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
