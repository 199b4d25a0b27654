import { describe, expect, it } from "vitest"
import { reefCommand } from "../commands/index.js"
import { helpText, usageErrorText } from "./help.js"
import { type ParseResult, parseCommandLine, suggestion } from "./parse.js"
import { type CommandSpec, commandPaths, type GroupSpec, type OptionSpec } from "./spec.js"
import { makeStyle, stripAnsi } from "./terminal.js"

const plain = makeStyle(false)
const parse = (line: string): ParseResult<unknown> =>
  parseCommandLine(reefCommand, line === "" ? [] : line.split(" ")) as ParseResult<unknown>

/** The command tree with every `run` returning its input, to see what a command would get. */
const echo = (command: CommandSpec): CommandSpec =>
  command._tag === "Group"
    ? { ...command, commands: command.commands.map(echo) }
    : { ...command, run: (input: unknown) => input }
const echoTree = echo(reefCommand) as GroupSpec<unknown>

const inputOf = (line: string): Record<string, unknown> => {
  const result = parseCommandLine(echoTree, line.split(" "))
  if (result._tag !== "Run") throw new Error(`${line}: ${result._tag} ${"message" in result ? result.message : ""}`)
  return result.run() as Record<string, unknown>
}

const errorOf = (line: string) => {
  const result = parse(line)
  expect(result._tag, line).toBe("UsageError")
  return result._tag === "UsageError" ? result.message : ""
}

describe("the reef command line", () => {
  it("documents every option of every command with its default", () => {
    for (const path of commandPaths(reefCommand)) {
      const help = helpText(path, plain)
      const command = path[path.length - 1]!
      expect(help, path.map((c) => c.name).join(" ")).toContain("Usage: ")
      if (command._tag === "Group") {
        for (const sub of command.commands) {
          expect(help).toContain(`\n  ${sub.name}`)
          expect(help.replace(/\s+/g, " ")).toContain(sub.summary.slice(0, 40))
        }
        continue
      }
      for (const [name, spec] of Object.entries(command.options) as Array<[string, OptionSpec<unknown>]>) {
        expect(spec.description.length, `--${name}`).toBeGreaterThan(10)
        // The option's entry: its line and the indented lines that continue it.
        const entry = help.split(/\n(?= {2}-)/).find((e) => new RegExp(`^ {2}(-\\w, )?--${name}\\b`).test(e))
        expect(entry, `--${name} of ${command.name}`).toBeDefined()
        if (!spec.flag)
          expect(entry!.replace(/\s+/g, " "), `--${name} of ${command.name}`).toMatch(/\(default: [^)]+\)/)
      }
    }
  })

  it("lists every role with one line, and gives each role its own help", () => {
    const run = helpText([reefCommand, reefCommand.commands.find((c) => c.name === "run")!], plain)
    expect(run).toMatch(/Roles:\n {2}gateway +gRPC gateway/)
    expect(run).toMatch(/\n {2}replica +POPUC replica/)
    const replica = parse("run replica --help")
    expect(replica._tag).toBe("Help")
    const text = replica._tag === "Help" ? helpText(replica.path, plain) : ""
    expect(text).toContain("--members")
    expect(text).not.toContain("--counters")
    const counter = parse("run counter --help")
    expect(counter._tag === "Help" ? helpText(counter.path, plain) : "").not.toContain("--members")
  })

  it("answers mistakes with one line, a hint where there is one", () => {
    expect(errorOf("stauts")).toBe(
      'unknown command "stauts" (did you mean status?); expected one of up, run, status, kv, tx, backup, airdb, ping, watch, bench'
    )
    expect(errorOf("up --replcias 3")).toBe("unknown option --replcias (did you mean --replicas?)")
    expect(errorOf("up --replicas 2")).toContain("POPUC needs an odd number of replicas")
    expect(errorOf("up --replicas three")).toBe('invalid --replicas "three": expected an integer from 0 to 9')
    expect(errorOf("up --counters")).toBe("--counters needs a value (N)")
    expect(errorOf("up --counters 1 --counters 2")).toBe("--counters given twice")
    expect(errorOf("up --with nosuch")).toContain('--with: unknown role "nosuch"')
    expect(errorOf("run")).toBe(
      "missing <role>: one of gateway, counter, replica, chain, backup, airdb, coordinator, worker"
    )
    expect(errorOf("run replcia")).toContain('unknown role "replcia" (did you mean replica?)')
    expect(errorOf("run replica --id r4 --members r1,r2,r3")).toContain("does not include this replica's --id r4")
    expect(errorOf("run replica --id r1 --members r1,r2")).toContain("POPUC needs an odd number")
    expect(errorOf("run replica --round-close sometimes")).toBe(
      'invalid --round-close "sometimes": expected one of allHeard, timer'
    )
    expect(errorOf("run counter --nats http://x:1")).toContain("expected a nats://")
    expect(errorOf("run counter --id a.b")).toContain('invalid --id "a.b"')
    expect(errorOf("run counter --metrics-port 70000")).toBe(
      'invalid --metrics-port "70000": expected a port or off from 0 to 65535'
    )
    expect(errorOf("run gateway --grpc-port -1")).toContain('invalid --grpc-port "-1"')
    expect(errorOf("kv put a")).toBe("missing <value>")
    expect(errorOf("kv get a b")).toBe('unexpected argument "b"')
    expect(errorOf("kv cas a 2")).toBe("give exactly one of --expect VALUE and --absent")
    expect(errorOf("status -o yaml")).toBe('invalid --output "yaml": expected one of text, json')
    expect(errorOf("status --gateway nohost")).toContain("expected host:port")
    expect(errorOf("ping c1")).toContain("expected role/id")
    expect(errorOf("status --version")).toBe("--version goes before the command: reef --version")
  })

  it("reads --name value, --name=value, -o value, -ovalue, flags and --", () => {
    expect(inputOf("status --role replica -o json --watch")).toMatchObject({
      role: "replica",
      output: "json",
      watch: true
    })
    expect(inputOf("status --role=replica -ojson")).toMatchObject({ role: "replica", output: "json", watch: false })
    expect(inputOf("kv put -- --weird -1")).toMatchObject({ key: "--weird", value: "-1" })
    expect(inputOf("up --workload=false --replicas 0")).toMatchObject({ workload: false, replicas: 0, counters: 2 })
    expect(inputOf("run replica --id r1 --members r1,r2,r3")).toMatchObject({
      members: ["r1", "r2", "r3"],
      group: "kv"
    })
    expect(inputOf("run counter --metrics-port off")).toMatchObject({ "metrics-port": "off" })
    expect(inputOf("status --gateway 7000")).toMatchObject({ gateway: "127.0.0.1:7000" })
  })

  it("takes --help and --verbose anywhere, but not after --", () => {
    expect(parse("kv put --help")._tag).toBe("Help")
    expect(parse("--help run")._tag).toBe("Help")
    expect(parse("kv put a b --verbose")).toMatchObject({ _tag: "Run", globals: { verbose: true } })
    expect(inputOf("kv put a -- --help")).toMatchObject({ key: "a", value: "--help" })
    expect(parse("")._tag).toBe("Help")
    expect(parse("--version")._tag).toBe("Version")
  })

  it("suggests only what is within a typo's reach", () => {
    expect(suggestion("stat", ["status", "up"])).toBe(" (did you mean status?)")
    expect(suggestion("xyz", ["status", "up"])).toBe("")
  })

  it("prints a usage error as the error line, the usage and where help is", () => {
    const result = parse("kv put a")
    const text = result._tag === "UsageError" ? usageErrorText(result.path, result.message, plain) : ""
    expect(text).toBe(
      "reef: missing <value>\nUsage: reef kv put <key> <value> [options]\nRun 'reef kv put --help' for more.\n"
    )
    const coloured = result._tag === "UsageError" ? usageErrorText(result.path, result.message, makeStyle(true)) : ""
    expect(coloured).toContain("\x1b[")
    expect(stripAnsi(coloured)).toBe(text)
  })
})
