/**
 * The command line every nemesis entry point shares: `--minutes N` (1 by default) and `--seed S` (random when
 * absent, printed so a run can be replayed), plus a suite's own boolean flags. A bad value prints the usage line
 * and exits 2.
 */
import { parseArgs } from "node:util"

export interface NemesisArgs {
  readonly minutes: number
  readonly seed: number
  readonly flags: ReadonlySet<string>
}

export const nemesisArgs = (
  usage: string,
  options: { readonly args?: ReadonlyArray<string>; readonly flags?: ReadonlyArray<string> } = {}
): NemesisArgs => {
  const flags = options.flags ?? []
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      ...(options.args === undefined ? {} : { args: [...options.args] }),
      options: {
        minutes: { type: "string", default: "1" },
        seed: { type: "string" },
        ...Object.fromEntries(flags.map((flag) => [flag, { type: "boolean" as const, default: false }]))
      },
      strict: true
    }).values
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\nusage: ${usage}`)
    process.exit(2)
  }
  const minutes = Number(values.minutes)
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed)
  if (!(minutes >= 0) || !Number.isInteger(seed)) {
    console.error(`usage: ${usage}`)
    process.exit(2)
  }
  return { minutes, seed, flags: new Set(flags.filter((flag) => values[flag] === true)) }
}
