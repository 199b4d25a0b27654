/**
 * An unreplicated Redis: the single-node, in-memory ceiling the POPUC KV benchmark is compared
 * against. `startRedis` runs `redis-server` (apt `redis-server`) on a free loopback port with no
 * persistence (`--save "" --appendonly no`: POPUC is in-memory too); `runRedisLoad` drives it with
 * `redis-benchmark` (apt `redis-tools`), Redis' own C load generator, and reduces its `--csv` line
 * to the same LoadResult as the etcd runs. redis-benchmark ≥ 7 prints p50/p99/max, which are
 * used; an older one (no percentile columns) yields NaN for them. It gives no per-interval
 * timeline, so `timeline100ms` is empty.
 */
import { findBinary, startRedisServer } from "@reef/devkit"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { LoadResult } from "./load.js"
import { machineBusyCpuSeconds, procCpuSeconds, runMeasured } from "./proc.js"

export interface RedisServer {
  readonly port: number
  readonly pid: number
  /** user+sys CPU seconds of redis-server so far (from /proc). */
  cpuSeconds(): number
  /** Stops it (nothing to flush: no persistence). Idempotent. */
  stop(): Promise<void>
}

/**
 * Starts redis-server through @reef/devkit's fixture (the one AirDB's tests use too); `stop` closes its scope
 * (SIGTERM, then SIGKILL: nothing to flush without persistence).
 */
export const startRedis = async (options: { readonly port?: number } = {}): Promise<RedisServer> => {
  const scope = Effect.runSync(Scope.make())
  const stop = () => Effect.runPromise(Scope.close(scope, Exit.void))
  const server = await Effect.runPromise(Scope.extend(startRedisServer(options), scope)).catch(async (error) => {
    await stop()
    throw error
  })
  return { port: server.port, pid: server.pid, cpuSeconds: () => procCpuSeconds(server.pid) ?? Number.NaN, stop }
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
  /** Requests pipelined per connection (`-P`, default 1). */
  readonly pipeline?: number
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
    "-P",
    String(options.pipeline ?? 1),
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
