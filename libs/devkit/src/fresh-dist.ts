/**
 * Whether the compiled JavaScript of the workspace (`dist/`, written by `pnpm build`) is at least as new as
 * its sources. `reef` started from TypeScript (pnpm reef, tests) then starts its children from that JavaScript
 * instead of through tsx, which compiles every module a process loads at start-up: several seconds per actor
 * process on a busy 2-core machine, most of a restarted replica's time to rejoin. A source edited since the
 * last build (test files aside) makes children run from source again, so they never run stale code.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

/** The packages of the root tsconfig.json's project references. */
const packageDirs = (root: string): ReadonlyArray<string> => {
  const config = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")) as {
    readonly references?: ReadonlyArray<{ readonly path: string }>
  }
  return (config.references ?? []).map((r) => join(root, r.path))
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

/** True when every package's last build (its `dist/.tsbuildinfo`) is newer than each of its sources. */
export const distIsFresh = (root: string): boolean => {
  try {
    return packageDirs(root).every(
      (dir) => statSync(join(dir, "dist", ".tsbuildinfo")).mtimeMs >= newestSource(join(dir, "src"))
    )
  } catch {
    // No build at all (or an unreadable tree): run from source.
    return false
  }
}
