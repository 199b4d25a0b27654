/**
 * The one parser of every `reef` command line: walks the command tree (spec.ts), then reads the leaf's
 * options and arguments, applies defaults and runs its checks. Pure: argv in, a decision out, nothing printed
 * and nothing started, so every input is validated before any work begins.
 *
 * Syntax: `--name value`, `--name=value`, `-o value`, `-ovalue`, flags as `--name` (or `--name=false`),
 * `--` ends options. `--help`/`-h` and `--verbose` are accepted anywhere; `--version` at the top.
 */
import type { ArgSpec, CommandSpec, GroupSpec, LeafSpec, OptionSpec } from "./spec.js"

export interface Globals {
  readonly verbose: boolean
}

export type ParseResult<R> =
  | {
      readonly _tag: "Run"
      readonly path: ReadonlyArray<CommandSpec<R>>
      readonly run: () => R
      readonly globals: Globals
    }
  | { readonly _tag: "Help"; readonly path: ReadonlyArray<CommandSpec<R>>; readonly globals: Globals }
  | { readonly _tag: "Version"; readonly globals: Globals }
  | {
      readonly _tag: "UsageError"
      readonly path: ReadonlyArray<CommandSpec<R>>
      /** One line, without the `reef:` prefix. */
      readonly message: string
      readonly globals: Globals
    }

/** Levenshtein distance, for "did you mean" hints. */
const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]!
}

/** The closest candidate within a typo's reach, as ` (did you mean X?)`, or nothing. */
export const suggestion = (word: string, candidates: ReadonlyArray<string>): string => {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of candidates) {
    const d = distance(word, candidate)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  const reach = Math.max(1, Math.floor(word.length / 3))
  return best !== undefined && (bestDistance <= reach || best.startsWith(word)) ? ` (did you mean ${best}?)` : ""
}

const isHelp = (token: string) => token === "--help" || token === "-h"

export const parseCommandLine = <R>(root: GroupSpec<R>, argv: ReadonlyArray<string>): ParseResult<R> => {
  const end = argv.indexOf("--")
  const beforeEnd = (index: number) => end < 0 || index < end
  const globals: Globals = { verbose: argv.some((t, index) => t === "--verbose" && beforeEnd(index)) }
  const tokens = argv.filter((t, index) => t !== "--verbose" || !beforeEnd(index))
  const help = tokens.some((t, index) => isHelp(t) && (end < 0 || index < tokens.indexOf("--")))

  // ---- the command path ---------------------------------------------------------------------------------
  const path: Array<CommandSpec<R>> = [root]
  let i = 0
  let current: CommandSpec<R> = root
  while (current._tag === "Group") {
    const token = tokens[i]
    if (token === undefined || isHelp(token)) {
      if (help || path.length === 1) return { _tag: "Help", path, globals }
      const names = current.commands.map((c) => c.name).join(", ")
      return { _tag: "UsageError", path, message: `missing ${current.placeholder}: one of ${names}`, globals }
    }
    if (token === "--version" && path.length === 1) return { _tag: "Version", globals }
    if (token.startsWith("-")) {
      if (help) return { _tag: "Help", path, globals }
      return { _tag: "UsageError", path, message: `expected ${current.placeholder} before ${token}`, globals }
    }
    const names = current.commands.map((c) => c.name)
    const next: CommandSpec<R> | undefined = current.commands.find((c) => c.name === token)
    if (next === undefined) {
      const what = current.placeholder.replace(/[<>]/g, "")
      return {
        _tag: "UsageError",
        path,
        message: `unknown ${what} "${token}"${suggestion(token, names)}; expected one of ${names.join(", ")}`,
        globals
      }
    }
    path.push(next)
    current = next
    i++
  }
  if (help) return { _tag: "Help", path, globals }
  const command: LeafSpec = current
  const usageError = (message: string): ParseResult<R> => ({ _tag: "UsageError", path, message, globals })

  // ---- options and arguments ----------------------------------------------------------------------------
  const optionEntries = Object.entries(command.options) as Array<[string, OptionSpec<unknown>]>
  const byShort = new Map(optionEntries.filter(([, o]) => o.short !== undefined).map(([n, o]) => [o.short!, n]))
  const given = new Map<string, string>()
  const positional: Array<string> = []
  let endOfOptions = false
  for (; i < tokens.length; i++) {
    const token = tokens[i]!
    if (endOfOptions || !token.startsWith("-") || token === "-" || /^-\d/.test(token)) {
      positional.push(token)
      continue
    }
    if (token === "--") {
      endOfOptions = true
      continue
    }
    let name: string | undefined
    let inline: string | undefined
    if (token.startsWith("--")) {
      const eq = token.indexOf("=")
      name = eq < 0 ? token.slice(2) : token.slice(2, eq)
      inline = eq < 0 ? undefined : token.slice(eq + 1)
    } else {
      name = byShort.get(token[1]!)
      inline = token.length > 2 ? token.slice(2) : undefined
      if (name === undefined) {
        const shorts = [...byShort.keys()].map((s) => `-${s}`)
        return usageError(`unknown option ${token.slice(0, 2)}${shorts.length > 0 ? suggestion(token, shorts) : ""}`)
      }
    }
    const spec = command.options[name] as OptionSpec<unknown> | undefined
    if (spec === undefined) {
      const known = optionEntries.map(([n]) => `--${n}`)
      if (name === "version") return usageError("--version goes before the command: reef --version")
      return usageError(`unknown option --${name}${suggestion(`--${name}`, known)}`)
    }
    if (given.has(name)) return usageError(`--${name} given twice`)
    if (spec.flag) {
      given.set(name, inline ?? "")
      continue
    }
    const value = inline ?? tokens[i + 1]
    if (value === undefined || (inline === undefined && value.startsWith("--"))) {
      return usageError(`--${name} needs a value (${spec.placeholder})`)
    }
    if (inline === undefined) i++
    given.set(name, value)
  }

  const input: Record<string, unknown> = {}
  for (const [name, spec] of optionEntries) {
    const raw = given.get(name)
    if (raw === undefined) {
      input[name] = spec.defaultValue
      continue
    }
    const parsed = spec.parse(raw)
    if (!parsed.ok) return usageError(`invalid --${name} "${raw}": ${parsed.error}`)
    input[name] = parsed.value
  }

  const argEntries = Object.entries(command.args) as Array<[string, ArgSpec<unknown>]>
  for (const [index, [name, spec]] of argEntries.entries()) {
    const raw = positional[index]
    if (raw === undefined) {
      if (!spec.optional) return usageError(`missing <${name}>`)
      input[name] = undefined
      continue
    }
    const parsed = spec.parse(raw)
    if (!parsed.ok) return usageError(`invalid <${name}> "${raw}": ${parsed.error}`)
    input[name] = parsed.value
  }
  if (positional.length > argEntries.length) {
    return usageError(`unexpected argument "${positional[argEntries.length]}"`)
  }
  const problem = command.validate?.(input)
  if (problem !== undefined) return usageError(problem)
  return { _tag: "Run", path, run: () => command.run(input) as R, globals }
}
