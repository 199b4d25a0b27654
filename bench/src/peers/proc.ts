/**
 * Small process helpers of the peer fixtures (etcd, Redis): free loopback ports, running a command to
 * completion while measuring its CPU, waiting for a child to exit, and reading a live process' CPU
 * seconds from /proc (finding binaries and killing children on exit: @reef/devkit). Plain async TS on
 * node: APIs: the peers are external programs, so nothing here needs Effect.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:net"

/**
 * `count` distinct free TCP ports on 127.0.0.1, found by binding port 0. All listeners are held open
 * until every port is known, so one call never returns the same port twice; another process may
 * still grab one before the caller binds it (the usual, small race).
 */
export const freePorts = async (count: number): Promise<number[]> => {
  const servers: Server[] = []
  try {
    const ports: number[] = []
    for (let i = 0; i < count; i++) {
      const server = createServer()
      servers.push(server)
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once("error", reject)
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            resolve(typeof address === "object" && address !== null ? address.port : 0)
          })
        })
      )
    }
    return ports
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
  }
}

/** Resolves when the child has exited (immediately if it already has). */
export const waitExit = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

const clockTicks = 100 // USER_HZ: 100 on every Linux build we run on (getconf CLK_TCK)

/** user+sys CPU seconds of a live process from /proc/<pid>/stat; undefined once it is gone. */
export const procCpuSeconds = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / clockTicks
  } catch {
    return undefined
  }
}

/**
 * Busy (non-idle, non-iowait) CPU seconds of the whole machine since boot, from /proc/stat. The
 * difference over a run minus the run's own client and server CPU is what other processes took:
 * a measurement on a shared 2-core machine is only trustworthy when that is near zero.
 */
export const machineBusyCpuSeconds = (): number | undefined => {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? ""
    const [, ...values] = line.trim().split(/\s+/)
    const ticks = values.map(Number)
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
    const busy = ticks.slice(0, 8).reduce((a, b) => a + b, 0) - (ticks[3] ?? 0) - (ticks[4] ?? 0)
    return busy / clockTicks
  } catch {
    return undefined
  }
}

export interface CommandResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** user+sys CPU seconds of the command and its children (bash `times`). */
  readonly cpuSeconds: number
}

const parseTimes = (line: string | undefined): number => {
  // bash `times` line: "0m0.193s 0m2.042s" (user, sys)
  const parts = [...(line ?? "").matchAll(/(\d+)m([\d.]+)s/g)]
  return parts.reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0)
}

/**
 * Runs `binary args` to completion through `bash -c '...; times'` so the command's own CPU time
 * (children's user+sys as bash reports it) comes back with its output.
 */
export const runMeasured = (
  binary: string,
  args: ReadonlyArray<string>,
  options: { readonly timeoutMs?: number; readonly env?: NodeJS.ProcessEnv } = {}
): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const marker = "__reef_times__"
    const child = spawn("bash", ["-c", `"$0" "$@"; rc=$?; echo ${marker} >&2; times >&2; exit $rc`, binary, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: options.env ?? process.env
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            child.kill("SIGKILL")
            reject(new Error(`${binary} did not finish within ${options.timeoutMs} ms`))
          }, options.timeoutMs)
    child.on("error", (cause) => {
      if (timer !== undefined) clearTimeout(timer)
      reject(cause)
    })
    child.on("close", (code) => {
      if (timer !== undefined) clearTimeout(timer)
      const at = stderr.lastIndexOf(marker)
      const own = at < 0 ? stderr : stderr.slice(0, at)
      const timesLines =
        at < 0
          ? []
          : stderr
              .slice(at + marker.length)
              .trim()
              .split("\n")
      // `times` prints the shell's own times, then its children's.
      resolve({ code, stdout, stderr: own, cpuSeconds: parseTimes(timesLines[1]) })
    })
  })
