/**
 * Help and usage text of any `reef` command, rendered from its spec: every option with its description and
 * default, every subcommand (or role) with its one-line summary. Pure; colour comes in as a Style.
 */
import type { ArgSpec, CommandSpec, GroupSpec, LeafSpec, OptionSpec } from "./spec.js"
import type { Style } from "./terminal.js"

/** Options every command accepts (handled by the parser itself). */
export const GLOBAL_OPTIONS: ReadonlyArray<readonly [string, string]> = [
  ["-h, --help", "show help for this command"],
  ["--verbose", "debug logs, and the full cause (stack trace) of a failure"]
]

const commandName = (path: ReadonlyArray<CommandSpec>) => path.map((c) => c.name).join(" ")

const optionLabel = (name: string, spec: OptionSpec<unknown>) =>
  `${spec.short === undefined ? "" : `-${spec.short}, `}--${name}${spec.flag ? "" : ` ${spec.placeholder}`}`

const defaultLabel = (spec: OptionSpec<unknown>): string => {
  if (spec.defaultText !== undefined) return spec.defaultText
  if (spec.flag || spec.defaultValue === undefined) return ""
  const value = spec.defaultValue
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.join(",")
  return String(value)
}

/** Greedy word wrap of `text` to `width` columns, continuation lines indented by `indent`. */
export const wrap = (text: string, width: number, indent: number): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && indent + line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.join(`\n${" ".repeat(indent)}`)
}

const table = (rows: ReadonlyArray<readonly [string, string]>, width: number): string => {
  const labelWidth = Math.min(32, Math.max(...rows.map(([label]) => label.length)))
  return rows
    .map(([label, text]) => {
      const indent = 2 + labelWidth + 2
      const body = wrap(text, width, indent)
      return label.length > labelWidth
        ? `  ${label}\n${" ".repeat(indent)}${body}`
        : `  ${label.padEnd(labelWidth)}  ${body}`
    })
    .join("\n")
}

/** The usage line of a command: `reef run replica [options]`, `reef kv put <key> <value> [options]`. */
export const usageLine = (path: ReadonlyArray<CommandSpec>): string => {
  const command = path[path.length - 1]!
  if (command._tag === "Group") return `${commandName(path)} ${command.placeholder} [options]`
  const args = (Object.entries(command.args) as Array<[string, ArgSpec<unknown>]>).map(([name, spec]) =>
    spec.optional ? `[<${name}>]` : `<${name}>`
  )
  return [commandName(path), ...args, Object.keys(command.options).length > 0 ? "[options]" : ""]
    .filter((s) => s !== "")
    .join(" ")
}

const examplesSection = (examples: ReadonlyArray<string> | undefined, style: Style) =>
  examples === undefined || examples.length === 0
    ? []
    : [`${style.heading("Examples:")}\n${examples.map((e) => `  ${e}`).join("\n")}`]

const leafHelp = (command: LeafSpec, style: Style, width: number) => {
  const sections: Array<string> = []
  const args = Object.entries(command.args) as Array<[string, ArgSpec<unknown>]>
  if (args.length > 0) {
    sections.push(
      `${style.heading("Arguments:")}\n${table(
        args.map(([name, spec]) => [`<${name}>`, spec.optional ? `${spec.description} (optional)` : spec.description]),
        width
      )}`
    )
  }
  const options = Object.entries(command.options) as Array<[string, OptionSpec<unknown>]>
  if (options.length > 0) {
    sections.push(
      `${style.heading("Options:")}\n${table(
        options.map(([name, spec]) => {
          const fallback = defaultLabel(spec)
          return [
            optionLabel(name, spec),
            fallback === "" ? spec.description : `${spec.description} (default: ${fallback})`
          ]
        }),
        width
      )}`
    )
  }
  sections.push(`${style.heading("Global options:")}\n${table(GLOBAL_OPTIONS, width)}`)
  return [...sections, ...examplesSection(command.examples, style)]
}

const groupHelp = (path: ReadonlyArray<CommandSpec>, command: GroupSpec, style: Style, width: number) => [
  `${style.heading(`${command.listHeading}:`)}\n${table(
    command.commands.map((c) => [c.name, c.summary]),
    width
  )}`,
  `${style.heading("Global options:")}\n${table(path.length === 1 ? [...GLOBAL_OPTIONS, ["--version", "print the version"]] : GLOBAL_OPTIONS, width)}`,
  ...examplesSection(command.examples, style),
  `Run '${commandName(path)} ${command.placeholder} --help' for the options of each.`
]

/** The full help of the last command of `path`. */
export const helpText = (path: ReadonlyArray<CommandSpec>, style: Style, width = 100): string => {
  const command = path[path.length - 1]!
  const head = [
    `${style.strong(commandName(path))}: ${command.summary}`,
    `${style.heading("Usage:")} ${usageLine(path)}`,
    ...(command.description === undefined ? [] : [wrapParagraphs(command.description, width)])
  ]
  const body = command._tag === "Leaf" ? leafHelp(command, style, width) : groupHelp(path, command, style, width)
  return `${[...head, ...body].join("\n\n")}\n`
}

const wrapParagraphs = (text: string, width: number) =>
  text
    .split(/\n\s*\n/)
    .map((p) => wrap(p, width, 0))
    .join("\n\n")

/** What a usage error prints: the error line, the usage line and where the help is. */
export const usageErrorText = (path: ReadonlyArray<CommandSpec>, message: string, style: Style): string =>
  `${style.error("reef:")} ${message}\n${style.heading("Usage:")} ${usageLine(path)}\n` +
  `Run '${commandName(path)} --help' for more.\n`
