/**
 * How a Reef process is started (`reef` itself through bin/reef.mjs, `reef up` launching `reef run ...`
 * children, benchmarks and tests starting actors): the `reef` entry point (services/cli) from the newest build
 * that is up to date with the sources (fresh-dist.ts), the bundle before the compiled dist, else from source
 * through tsx. This knows the CLI's path, not its code: nothing here imports @reef/cli, so bench and tests
 * start actors without depending on it.
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { BUNDLE_ENTRY, freshBuild } from "./fresh-dist.js"

const here = fileURLToPath(import.meta.url)

/** Root of the repository (libs/devkit/{src,dist}/ -> ../../..). */
export const repoRoot: string = join(dirname(here), "..", "..", "..")

/**
 * V8 flags for every `reef` process. An actor process is long-lived and counted in megabytes: V8's default
 * young generation (16 MB semi-spaces, per isolate, and a replica has two isolates) is most of the gap
 * between an idle replica at ~125 MB and at ~95 MB. Smaller semi-spaces mean more, shorter scavenges, which
 * also keeps GC pauses well inside a round. `bin/reef.mjs` passes the same flag.
 */
export const REEF_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=2"]

/** What a `reef` process runs: the bundle (`pnpm build`), the compiled dist (`tsc -b`) or the TypeScript. */
export type ReefBuild = "bundle" | "dist" | "source"

/**
 * The build `reef` processes run from: the newest one as new as every source, else the sources; always the
 * sources when `REEF_CHILDREN_FROM_SOURCE=1` asks for it. Decided once per process, so `reef up` starts every
 * child from the same build.
 */
let build: ReefBuild | undefined
export const reefBuild = (): ReefBuild => {
  build ??= process.env.REEF_CHILDREN_FROM_SOURCE === "1" ? "source" : (freshBuild(repoRoot) ?? "source")
  return build
}

const ENTRIES: Record<ReefBuild, string> = {
  bundle: BUNDLE_ENTRY,
  dist: join("services", "cli", "dist", "main.js"),
  source: join("services", "cli", "src", "main.ts")
}

/** The module that runs `reef` from `build`. */
export const reefEntry = (from: ReefBuild = reefBuild()): string => join(repoRoot, ENTRIES[from])

/** The module of `reef status`'s fast path (services/cli/src/fast-status.ts) in `from`; none from source. */
export const reefStatusEntry = (from: ReefBuild = reefBuild()): string | undefined =>
  from === "bundle"
    ? join(repoRoot, dirname(BUNDLE_ENTRY), "reef-status.mjs")
    : from === "dist"
      ? join(repoRoot, "services", "cli", "dist", "fast-status.js")
      : undefined

/** argv (after the node binary) that runs `reef` with `args`. */
export const reefArgv = (args: ReadonlyArray<string>, from: ReefBuild = reefBuild()): ReadonlyArray<string> =>
  from === "source"
    ? [
        ...REEF_NODE_FLAGS,
        "--conditions=@reef/source",
        "--import",
        // Resolved here, not by the child: a child started in another directory would not find "tsx".
        pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href,
        reefEntry(from),
        ...args
      ]
    : [...REEF_NODE_FLAGS, reefEntry(from), ...args]

/** Where Debian and similar distributions put jemalloc 5 (package libjemalloc2). */
export const JEMALLOC_PATHS: ReadonlyArray<string> = [
  "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
  "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
  "/usr/lib64/libjemalloc.so.2",
  "/usr/lib/libjemalloc.so.2"
]

/**
 * Unused pages go back to the kernel within about 5 s, from jemalloc's own background thread, so a process
 * that has gone idle gives memory back without running. (A 1 s decay with two arenas returned it sooner but
 * cost ~4% of the writes at N = 5; this setting measured the same as glibc: 5,697 against 5,737 writes/s,
 * nine 5 s loads each.)
 */
export const JEMALLOC_CONF = "background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0"

/**
 * Environment that gives a `reef` child process jemalloc as its allocator, when the machine has it
 * (scripts/bootstrap.sh installs it). With glibc's malloc a replica that has served a load stays large once
 * idle: its heap is fragmented by buffers that outlive their neighbours (KV values, retained decisions), and
 * free() only ever returns the heap's top. Measured on a 3-replica group after 30 s of KV load in each
 * deployment mode, then 30 s idle: 193-233 MB RSS per replica with glibc, 124-127 MB with jemalloc; before
 * the load, 107-114 MB either way. `REEF_MALLOC=system` keeps glibc's; a jemalloc already preloaded is left as it is.
 */
export const allocatorEnv = (
  env: Readonly<Record<string, string | undefined>> = process.env,
  exists: (path: string) => boolean = existsSync
): Record<string, string> => {
  if (process.platform !== "linux" || env.REEF_MALLOC === "system" || env.LD_PRELOAD?.includes("libjemalloc")) {
    return {}
  }
  const library = JEMALLOC_PATHS.find((path) => exists(path))
  if (library === undefined) return {}
  return {
    LD_PRELOAD: env.LD_PRELOAD ? `${library}:${env.LD_PRELOAD}` : library,
    MALLOC_CONF: env.MALLOC_CONF ?? JEMALLOC_CONF
  }
}
