/** `reef bench <suite>`: runs bench/src/main.ts in a child process with the same arguments as `pnpm bench`. */
import { Command } from "@effect/platform"
import * as Effect from "effect/Effect"
import { sourceArgv } from "./self-command.js"

export const runBench = (suite: string, quick: boolean) =>
  Command.make(process.execPath, ...sourceArgv("bench/src/main.ts", [suite, ...(quick ? ["--quick"] : [])])).pipe(
    Command.stdout("inherit"),
    Command.stderr("inherit"),
    Command.exitCode,
    Effect.flatMap((code) => (code === 0 ? Effect.void : Effect.fail(new Error(`bench ${suite} exited with ${code}`))))
  )
