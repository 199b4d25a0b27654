/** `reef bench <suite>`: runs `pnpm bench <suite>` (build, then bench/dist/main.js) from the repository root. */
import * as Effect from "effect/Effect"
import { type CliFailure, SubprocessFailedError } from "../cli/errors.js"
import { Arg, leaf, Opt } from "../cli/spec.js"

export const benchCommand = leaf({
  name: "bench",
  summary: "run a benchmark suite (writes bench/results/<suite>.json)",
  description:
    "Builds, then runs the suite with `pnpm bench <suite>` from the repository root; see bench/results/ for the last numbers.",
  options: { quick: Opt.flag({ description: "a short run (CI's contract check), not a measurement" }) },
  args: { suite: Arg.text({ description: "the suite: kernel, popuc, soak, ..." }) },
  examples: ["reef bench kernel --quick"],
  run: (input): Effect.Effect<void, CliFailure> =>
    Effect.gen(function* () {
      const [{ spawn }, { repoRoot }] = yield* Effect.promise(() =>
        Promise.all([import("node:child_process"), import("@reef/devkit")])
      )
      const code = yield* Effect.async<number | null>((resume) => {
        const child = spawn("pnpm", ["--silent", "bench", input.suite, ...(input.quick ? ["--quick"] : [])], {
          cwd: repoRoot,
          stdio: "inherit"
        })
        child.once("error", () => resume(Effect.succeed(null)))
        child.once("exit", (exit) => resume(Effect.succeed(exit)))
        return Effect.sync(() => child.kill("SIGTERM"))
      })
      if (code !== 0) return yield* new SubprocessFailedError({ command: `pnpm bench ${input.suite}`, exitCode: code })
    })
})
