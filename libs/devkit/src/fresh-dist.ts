/**
 * Which build of the workspace is up to date with its sources: the bundle (`pnpm build`: `tsc -b`, then
 * scripts/bundle.mjs), the compiled JavaScript (`dist/`, `tsc -b` alone), or neither. `reef` runs the newest
 * one that is (reef-command.ts); with neither it runs from source through tsx, which compiles every module a
 * process loads at start-up: several seconds per actor process on a busy 2-core machine. A source edited since
 * the last build (test files aside) makes `reef` run from source again, so it never runs stale code.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

const CLI_PACKAGE = join("services", "cli")

/** The bundled `reef` entry point that scripts/bundle.mjs writes (its other files sit next to it). */
export const BUNDLE_ENTRY = join(CLI_PACKAGE, "dist", "bundle", "reef.mjs")

/** The package folders a tsconfig.json's project references name. */
const references = (dir: string): ReadonlyArray<string> => {
  const config = JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8")) as {
    readonly references?: ReadonlyArray<{ readonly path: string }>
  }
  return (config.references ?? []).map((r) => join(dir, r.path))
}

/**
 * What a `reef` process runs: the CLI's package and every package it references, transitively (not the tests'
 * or the benchmarks', whose builds say nothing about the CLI's).
 */
const cliPackageDirs = (root: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const visit = (dir: string) => {
    if (seen.has(dir)) return
    seen.add(dir)
    for (const next of references(dir)) visit(next)
  }
  visit(join(root, CLI_PACKAGE))
  return [...seen]
}

/** Newest modification time (ms) of a package's non-test TypeScript sources under `dir`. */
const newestSource = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path))
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
      newest = Math.max(newest, statSync(path).mtimeMs)
    }
  }
  return newest
}

/**
 * The newest build of what `reef` runs that is at least as new as its sources: "bundle" when the bundle was
 * written after every such package's last `tsc -b` (its `dist/.tsbuildinfo`) and each of those after its
 * sources, "dist" when only the latter holds, undefined when a source is newer than its package's build (or
 * there is no build).
 */
export const freshBuild = (root: string): "bundle" | "dist" | undefined => {
  try {
    let newestBuild = 0
    for (const dir of cliPackageDirs(root)) {
      const built = statSync(join(dir, "dist", ".tsbuildinfo")).mtimeMs
      if (built < newestSource(join(dir, "src"))) return undefined
      newestBuild = Math.max(newestBuild, built)
    }
    const bundled = statSync(join(root, BUNDLE_ENTRY), { throwIfNoEntry: false })?.mtimeMs ?? 0
    return bundled >= newestBuild ? "bundle" : "dist"
  } catch {
    // No build at all (or an unreadable tree).
    return undefined
  }
}
