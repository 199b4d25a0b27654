/**
 * An unreplicated Redis: the single-node, in-memory ceiling the POPUC KV benchmark is compared
 * against. `startRedis` runs `redis-server` (apt `redis-server`) on a free loopback port with no
 * persistence (`--save "" --appendonly no`: POPUC is in-memory too); `runRedisLoad` drives it with
 * `redis-benchmark` (apt `redis-tools`), Redis' own C load generator, and reduces its `--csv` line
 * to the same LoadResult as the etcd runs. redis-benchmark ≥ 7 prints p50/p99/max, which are
 * used; an older one (no percentile columns) yields NaN for them. It gives no per-interval
 * timeline, so `timeline100ms` is empty.
 */
import { spawn } from "node:child_process"
import { createConnection } from "node:net"
import type { LoadResult } from "./load.js"
import {
  findBinary,
  freePorts,
  killOnExit,
  machineBusyCpuSeconds,
  procCpuSeconds,
  runMeasured,
  waitExit
} from "./proc.js"

export interface RedisServer {
  readonly port: number
  readonly pid: number
  /** user+sys CPU seconds of redis-server so far (from /proc). */
  cpuSeconds(): number
  /** SIGKILL (nothing to flush: no persistence). Idempotent. */
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Sends PING, resolves whether +PONG came back. */
const ping = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port })
    let reply = ""
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.on("error", () => done(false))
    socket.on("connect", () => socket.write("PING\r\n"))
    socket.on("data", (chunk) => {
      reply += chunk.toString()
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"))
    })
  })

export const startRedis = async (
  options: { readonly port?: number; readonly startTimeoutMs?: number } = {}
): Promise<RedisServer> => {
  const binary = findBinary("redis-server", "REDIS_SERVER_BIN", ["/usr/bin/redis-server"])
  if (binary === undefined) throw new Error("redis-server not found: apt-get install -y redis-server")
  const port = options.port ?? (await freePorts(1))[0]!
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--logfile",
    "",
    "--loglevel",
    "warning"
  ]
  const child = killOnExit(spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] }))
  let log = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-16_384)
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await waitExit(child)
  }
  const timeoutMs = options.startTimeoutMs ?? 10_000
  const deadline = Date.now() + timeoutMs
  while (!(await ping(port))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`redis-server not ready on port ${port} after ${timeoutMs} ms:\n${log}`)
    }
    await sleep(50)
  }
  const pid = child.pid ?? 0
  const server: RedisServer = { port, pid, cpuSeconds: () => procCpuSeconds(pid) ?? Number.NaN, stop }
  return server
}

export interface RedisLoadOptions {
  readonly port: number
  readonly op: "set" | "get"
  /** Parallel connections (`-c`). */
  readonly concurrency: number
  /** Total requests (`-n`). */
  readonly requests: number
  /** SET value size in bytes (`-d`, default 256). */
  readonly valueSize?: number
  /** Random keys from this many (`-r`, default 10000); run a SET load first so GETs hit. */
  readonly keySpace?: number
  /** redis-benchmark client threads (`--threads`, default 1: its single thread is enough here). */
  readonly threads?: number
  /** Pid of redis-server, to report its CPU (serverCpuSeconds). */
  readonly serverPid?: number
}

/** Parses redis-benchmark `--csv` output (header line + one line per test) into a LoadResult. */
export const parseRedisBenchmarkCsv = (stdout: string, requests: number, clientCpuSeconds: number): LoadResult => {
  const lines = stdout
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.startsWith('"'))
  const cells = (line: string) => [...line.matchAll(/"([^"]*)"/g)].map((m) => m[1]!)
  const header = cells(lines[0] ?? "")
  const row = cells(lines[1] ?? "")
  const col = (name: string) => {
    const i = header.indexOf(name)
    return i < 0 || row[i] === undefined ? Number.NaN : Number(row[i])
  }
  const rps = col("rps")
  if (!(rps > 0)) throw new Error(`cannot parse redis-benchmark --csv output:\n${stdout}`)
  return {
    ops: requests,
    seconds: requests / rps,
    throughputPerSec: rps,
    p50Ms: col("p50_latency_ms"),
    p99Ms: col("p99_latency_ms"),
    maxMs: col("max_latency_ms"),
    errors: 0,
    clientCpuSeconds,
    timeline100ms: []
  }
}

/** One redis-benchmark run (`-t set|get -c -n -d -r --csv`), measured. */
export const runRedisLoad = async (options: RedisLoadOptions): Promise<LoadResult> => {
  const binary = findBinary("redis-benchmark", "REDIS_BENCHMARK_BIN", ["/usr/bin/redis-benchmark"])
  if (binary === undefined) throw new Error("redis-benchmark not found: apt-get install -y redis-tools")
  const args = [
    "-h",
    "127.0.0.1",
    "-p",
    String(options.port),
    "-t",
    options.op,
    "-c",
    String(options.concurrency),
    "-n",
    String(options.requests),
    "-d",
    String(options.valueSize ?? 256),
    "-r",
    String(options.keySpace ?? 10_000),
    "--threads",
    String(options.threads ?? 1),
    "--csv"
  ]
  const before = options.serverPid === undefined ? undefined : procCpuSeconds(options.serverPid)
  const machineBefore = machineBusyCpuSeconds()
  const run = await runMeasured(binary, args, { timeoutMs: 600_000 })
  const machineAfter = machineBusyCpuSeconds()
  const after = options.serverPid === undefined ? undefined : procCpuSeconds(options.serverPid)
  if (run.code !== 0) throw new Error(`redis-benchmark exited with ${run.code}:\n${run.stderr}\n${run.stdout}`)
  const result = parseRedisBenchmarkCsv(run.stdout, options.requests, run.cpuSeconds)
  return {
    ...result,
    ...(before === undefined || after === undefined ? {} : { serverCpuSeconds: after - before }),
    ...(machineBefore === undefined || machineAfter === undefined
      ? {}
      : { machineCpuSeconds: machineAfter - machineBefore })
  }
}
