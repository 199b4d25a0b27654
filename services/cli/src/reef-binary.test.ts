/**
 * The `reef` binary as a user meets it: every command's `--help`, and mistakes (typos, bad values, nothing
 * listening). Each mistake must be one line (plus usage for a command-line mistake), exit code 2 for the
 * command line and 1 otherwise, and never a stack trace.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { reefArgv, repoRoot } from "@reef/devkit"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { commandPaths } from "./cli/spec.js"
import { stripAnsi } from "./cli/terminal.js"
import { reefCommand } from "./commands/index.js"
import { anyFreePort } from "./ports.js"

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const reef = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [...reefArgv(args)], {
      // No cluster file from the developer's own `reef up` may leak in: point at one that does not exist.
      env: { ...process.env, NO_COLOR: "", FORCE_COLOR: "", REEF_CLUSTER_FILE: "/nonexistent/cluster.json", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

/** Runs `f` over `items`, `limit` at a time (each is a process on a shared 2-core machine). */
const mapLimit = async <A, B>(items: ReadonlyArray<A>, limit: number, f: (a: A) => Promise<B>) => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++
        results[i] = await f(items[i]!)
      }
    })
  )
  return results
}

const STACK_LINE = /^\s+at\s/m

const expectOneLineError = (ran: Ran, code: number, what: string) => {
  const context = `${what}:\n${ran.stderr}${ran.stdout}`
  expect(ran.code, context).toBe(code)
  expect(ran.stderr, context).toMatch(/^reef: \S/)
  expect(ran.stderr, context).not.toMatch(STACK_LINE)
  const lines = ran.stderr.trimEnd().split("\n")
  // The error line, then (for the command line) the usage line and where the help is.
  expect(lines.length, context).toBe(code === 2 ? 3 : 1)
  if (code === 2) expect(lines[1], context).toMatch(/^Usage: reef /)
}

describe("reef (the binary)", () => {
  it("prints help for every command, without colour when piped", async () => {
    const paths = commandPaths(reefCommand).map((path) => path.slice(1).map((c) => c.name))
    const runs = await mapLimit(paths, 4, (path) => reef([...path, "--help"]))
    for (const [i, ran] of runs.entries()) {
      const what = `reef ${paths[i]!.join(" ")} --help`
      expect(ran.code, `${what}\n${ran.stderr}`).toBe(0)
      expect(ran.stdout, what).toMatch(/Usage: reef/)
      expect(ran.stdout, what).not.toContain("\x1b[")
      expect(ran.stderr, what).toBe("")
    }
  }, 120_000)

  it("colours help only when asked to, and never with NO_COLOR", async () => {
    const [forced, both] = await Promise.all([
      reef(["--help"], { FORCE_COLOR: "1" }),
      reef(["--help"], { FORCE_COLOR: "1", NO_COLOR: "1" })
    ])
    expect(forced.stdout).toContain("\x1b[1m")
    expect(both.stdout).not.toContain("\x1b[")
    expect(stripAnsi(forced.stdout)).toBe(both.stdout)
  }, 60_000)

  it("answers typos and bad values with one line, usage and exit code 2", async () => {
    const mistakes = [
      ["stauts"],
      ["up", "--replcias", "3"],
      ["up", "--replicas", "2"],
      ["up", "--counters", "-3"],
      ["up", "--with", "nosuch"],
      ["run"],
      ["run", "replcia"],
      ["run", "replica", "--members", "r1,r2"],
      ["run", "counter", "--nats", "http://127.0.0.1:4222"],
      ["run", "gateway", "--grpc-port", "99999"],
      ["kv", "put", "a"],
      ["kv", "delete", "a"],
      ["kv", "cas", "a", "2"],
      ["status", "-o", "yaml"],
      ["status", "--watch=soon"],
      ["ping", "c1"],
      ["bench"],
      ["run", "coordinator", "--reject-rate", "2"],
      ["run", "coordinator", "--popuc-min-replicas", "3"],
      ["run", "worker", "--cores", "0"],
      ["up", "--remora-consensus", "popuc", "--replicas", "0"],
      ["tx", "submit", "ycsb"],
      ["tx", "submit", "nosuch"],
      ["tx", "submit", "raw", "--contract", "x", "--args-hex", "abc"],
      ["tx", "receipt"],
      // An empty key or id is a mistake in the command line, refused before anything is asked.
      ["kv", "put", "", "1"],
      ["kv", "get", ""],
      ["airdb", "get", ""],
      ["tx", "get", ""],
      ["tx", "receipt", ""]
    ]
    const runs = await mapLimit(mistakes, 4, (args) => reef(args))
    for (const [i, ran] of runs.entries()) expectOneLineError(ran, 2, `reef ${mistakes[i]!.join(" ")}`)
  }, 120_000)

  it("says in one line that nothing listens, exit code 1", async () => {
    const port = await Effect.runPromise(anyFreePort())
    const [nats, status, kv, tx] = await Promise.all([
      reef(["run", "counter", "--nats", `nats://127.0.0.1:${port}`]),
      reef(["status", "--gateway", `127.0.0.1:${port}`]),
      reef(["kv", "get", "a"]),
      reef(["tx", "state", "--execution", `127.0.0.1:${port}`])
    ])
    expectOneLineError(nats, 1, "run counter without NATS")
    expect(nats.stderr).toContain(`cannot reach NATS at nats://127.0.0.1:${port}`)
    expectOneLineError(status, 1, "status without a gateway")
    expect(status.stderr).toContain(`cannot reach the gateway at 127.0.0.1:${port}`)
    expectOneLineError(kv, 1, "kv get without a cluster")
    // The file $REEF_CLUSTER_FILE names, not the default .reef/cluster.json.
    expect(kv.stderr).toBe(
      "reef: no running cluster: /nonexistent/cluster.json (from $REEF_CLUSTER_FILE) not found (start one with 'reef up')\n"
    )
    expectOneLineError(tx, 1, "tx state without a coordinator")
    expect(tx.stderr).toContain(`cannot reach the coordinator at 127.0.0.1:${port}`)
  }, 60_000)

  it("pnpm sim popuc --help prints the simulator's usage and exits 0", async () => {
    const ran = await new Promise<Ran>((resolve) => {
      const child = spawn(
        process.execPath,
        ["--conditions=@reef/source", "--import", "tsx", join(repoRoot, "scripts", "sim.ts"), "popuc", "--help"],
        { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] }
      )
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.once("exit", (code) => resolve({ code, stdout, stderr }))
    })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toMatch(/^usage: pnpm sim popuc/)
    expect(ran.stdout).toContain("--seeds N")
  }, 60_000)

  it("prints the full cause only with --verbose", async () => {
    const port = await Effect.runPromise(anyFreePort())
    const ran = await reef(["status", "--gateway", `127.0.0.1:${port}`, "--verbose"])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toMatch(/^reef: cannot reach the gateway/m)
    // The cause follows the line (and debug logs precede it).
    expect(ran.stderr.split("\n").length).toBeGreaterThan(3)
  }, 60_000)
})
