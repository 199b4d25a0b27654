/** `reef bench <suite>`: runs `pnpm bench <suite>` (build, then bench/dist/main.js) from the repository root. */
import { Command } from "@effect/platform"
import { repoRoot } from "@reef/devkit"
import * as Effect from "effect/Effect"

export const runBench = (suite: string, quick: boolean) =>
  Command.make("pnpm", "--silent", "bench", suite, ...(quick ? ["--quick"] : [])).pipe(
    Command.workingDirectory(repoRoot),
    Command.stdout("inherit"),
    Command.stderr("inherit"),
    Command.exitCode,
    Effect.flatMap((code) => (code === 0 ? Effect.void : Effect.fail(new Error(`bench ${suite} exited with ${code}`))))
  )
