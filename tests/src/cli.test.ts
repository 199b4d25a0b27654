/**
 * The `reef` binary as a user runs it: `reef up` (with its embedded nats-server and one process per actor),
 * `reef status` against it over gRPC, and `reef up --workload` end to end.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { reefArgv } from "@reef/devkit"
import { freePort } from "@reef/kernel"
import * as Effect from "effect/Effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { makeHarness, startNats } from "./harness.js"

const running: Array<ChildProcess> = []
/** The nats-server of tests that need one without `reef up`'s embedded server. */
const harness = makeHarness()
afterAll(() => harness.close())
afterEach(() => {
  // Each `reef` runs in its own process group: a failed test must not leave its actor processes behind.
  for (const child of running.splice(0)) {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }
  }
})

const reef = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [...reefArgv(args)], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, OTEL_SDK_DISABLED: "true" }
  })
  running.push(child)
  const lines: Array<string> = []
  const waiters: Array<{ match: (line: string) => boolean; resolve: () => void }> = []
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line)
      for (const w of waiters.filter((w) => w.match(line))) w.resolve()
    })
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const waitForLine = (match: (line: string) => boolean) =>
    new Promise<void>((resolve, reject) => {
      if (lines.some(match)) return resolve()
      waiters.push({ match, resolve })
      void exited.then((code) => reject(new Error(`exited (${code}) before the line; output:\n${lines.join("\n")}`)))
    })
  return { child, lines, exited, waitForLine }
}

describe("reef CLI", () => {
  it("reef up starts a cluster that reef status lists over gRPC; Ctrl-C stops every process", async () => {
    const port = await Effect.runPromise(freePort)
    const up = reef(["up", "--grpc-port", String(port), "--counters", "2", "--cluster", "clitest"])
    await up.waitForLine((l) => l.includes("is up"))
    const status = reef(["status", "--gateway", `127.0.0.1:${port}`])
    expect(await status.exited, status.lines.join("\n")).toBe(0)
    const table = status.lines.join("\n")
    // On a failure, what `reef up` printed too.
    const context = `reef status:\n${table}\nreef up:\n${up.lines.join("\n")}`
    for (const [role, id] of [
      ["gateway", "gw1"],
      ["counter", "c1"],
      ["counter", "c2"]
    ]) {
      expect(table, context).toMatch(new RegExp(`${role}\\s+${id}\\s+joined\\s+running`))
    }
    for (const id of ["r1", "r2", "r3"]) {
      expect(table, context).toMatch(new RegExp(`replica\\s+${id}\\s+joined\\s+running`))
    }
    // One process per counter, one for the gateway, one per replica (its nic actor shares the replica's process).
    const pids = new Set([...table.matchAll(/joined\s+running\s+(\d+)/g)].map((m) => Number(m[1])))
    expect(pids.size, context).toBe(6)
    up.child.kill("SIGINT")
    expect(await up.exited).not.toBeNull()
    // Every actor process it started is gone.
    for (const pid of pids) expect(() => process.kill(pid, 0), `pid ${pid}; ${up.lines.join("\n")}`).toThrow()
  }, 90_000)

  it("reef up --workload runs the demo workload, checks it, prints results and exits 0", async () => {
    const port = await Effect.runPromise(freePort)
    const up = reef(["up", "--workload", "--grpc-port", String(port), "--cluster", "cliwork"])
    // `reef up` bounds each of its phases itself; this watchdog only makes sure that a hang still shows the
    // output (a vitest timeout would not).
    const watchdog = setTimeout(() => process.kill(-up.child.pid!, "SIGKILL"), 200_000)
    const code = await up.exited.finally(() => clearTimeout(watchdog))
    const output = up.lines.join("\n")
    expect(code, output).toBe(0)
    expect(output).toContain("Workload results")
    expect(output).toMatch(/batched tell .*counter = 100000 \(ok\)/)
    expect(output).toMatch(/hops c1@\d+ -> c2@\d+/)
  }, 210_000)

  it("reef run replica stops on SIGTERM while its engine still waits for peers that never come", async () => {
    const nats = await startNats(harness)
    const replica = reef(["run", "replica", "--id", "r1", "--members", "r1,r2,r3", "--nats", nats.url])
    await replica.waitForLine((l) => l.includes("waiting for engines"))
    replica.child.kill("SIGTERM")
    // Hung for good before: the engine's start was an uninterruptible acquire.
    expect(await replica.exited).not.toBeNull()
    expect(replica.child.signalCode).toBeNull()
  }, 60_000)
})
