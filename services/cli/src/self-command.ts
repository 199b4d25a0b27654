/**
 * How `reef` starts more of itself (`reef up` launching `reef run ...` children): from source through tsx
 * when this module is TypeScript (pnpm reef, tests), from the compiled dist otherwise.
 */
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = fileURLToPath(import.meta.url)
const fromSource = here.endsWith(".ts")

/** Root of the repository (services/cli/{src,dist}/ -> ../../..). */
export const repoRoot: string = join(dirname(here), "..", "..", "..")

/**
 * V8 flags for every `reef` process. An actor process is long-lived and counted in megabytes: V8's default
 * young generation (16 MB semi-spaces, per isolate, and a replica has two isolates) is most of the gap
 * between an idle replica at ~125 MB and at ~95 MB. Smaller semi-spaces mean more, shorter scavenges, which
 * also keeps GC pauses well inside a round. `bin/reef.mjs` passes the same flag.
 */
export const REEF_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=2"]

/** argv (after the node binary) that runs `reef` with `args`. */
export const reefArgv = (args: ReadonlyArray<string>): ReadonlyArray<string> =>
  fromSource
    ? [
        ...REEF_NODE_FLAGS,
        "--conditions=@reef/source",
        "--import",
        "tsx",
        join(repoRoot, "services", "cli", "src", "main.ts"),
        ...args
      ]
    : [...REEF_NODE_FLAGS, join(repoRoot, "services", "cli", "dist", "main.js"), ...args]
