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

/** argv (after the node binary) that runs `reef` with `args`. */
export const reefArgv = (args: ReadonlyArray<string>): ReadonlyArray<string> =>
  fromSource
    ? ["--conditions=@reef/source", "--import", "tsx", join(repoRoot, "services", "cli", "src", "main.ts"), ...args]
    : [join(repoRoot, "services", "cli", "dist", "main.js"), ...args]
