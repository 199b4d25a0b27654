/**
 * Drives an etcd cluster with the Go load generator in bench/go/etcdload (etcd's own clientv3), so
 * the measurement is etcd's limit and not the client's: a grpc-js client saturates a core at ~2k
 * PUT/s on this machine, the Go client does not. `buildEtcdLoad` compiles the tool on first use
 * (offline, from Debian's golang-go + golang-etcd-server-dev, via bench/go/build.sh) into a cache
 * directory keyed by a hash of its sources; `runEtcdLoad` runs it and parses its one JSON line.
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { findBinary } from "@reef/devkit"
import type { EtcdCluster } from "./etcd.js"
import type { LoadResult } from "./load.js"
import { machineBusyCpuSeconds, runMeasured } from "./proc.js"

/** bench/go, from bench/src/peers (tsx, vitest) or bench/dist/peers (compiled). */
export const benchGoDir = (): string => resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "go")

/** sha256 of etcdload/*.go (sorted, C order) then build.sh, as build.sh computes it for its default path. */
const sourceHash = (goDir: string): string => {
  const hash = createHash("sha256")
  const toolDir = join(goDir, "etcdload")
  const sources = readdirSync(toolDir)
    .filter((f) => f.endsWith(".go"))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  for (const file of sources) hash.update(readFileSync(join(toolDir, file)))
  hash.update(readFileSync(join(goDir, "build.sh")))
  return hash.digest("hex").slice(0, 12)
}

/** Where the binary for the current sources lives: `$REEF_GO_BIN_DIR` or <tmpdir>/reef-bench-go. */
export const etcdLoadBinaryPath = (): string =>
  join(process.env.REEF_GO_BIN_DIR ?? join(tmpdir(), "reef-bench-go"), `etcdload-${sourceHash(benchGoDir())}`)

/** Whether `buildEtcdLoad` can succeed without installing anything: binary cached, or go + sources present. */
export const etcdLoadAvailable = (): boolean => {
  const prebuilt = process.env.REEF_ETCDLOAD_BIN
  if (prebuilt !== undefined && prebuilt !== "") return existsSync(prebuilt)
  if (existsSync(etcdLoadBinaryPath())) return true
  return (
    findBinary("go", undefined, ["/usr/bin/go"]) !== undefined &&
    existsSync("/usr/share/gocode/src/go.etcd.io/etcd/clientv3")
  )
}

let building: Promise<string> | undefined

/**
 * Path of the etcdload binary, building it only when missing (`$REEF_ETCDLOAD_BIN` wins when set).
 * With `install: true` the build script may apt-get install golang-go and golang-etcd-server-dev
 * first; by default it does not (CI's bootstrap runs `bash bench/go/build.sh` for that).
 */
export const buildEtcdLoad = (options: { readonly install?: boolean } = {}): Promise<string> => {
  const prebuilt = process.env.REEF_ETCDLOAD_BIN
  if (prebuilt !== undefined && prebuilt !== "") {
    return existsSync(prebuilt)
      ? Promise.resolve(prebuilt)
      : Promise.reject(new Error(`REEF_ETCDLOAD_BIN=${prebuilt} does not exist`))
  }
  const out = etcdLoadBinaryPath()
  if (existsSync(out)) return Promise.resolve(out)
  building ??= (async () => {
    const script = join(benchGoDir(), "build.sh")
    const result = await runMeasured("bash", [script, out], {
      timeoutMs: 600_000,
      env: { ...process.env, REEF_NO_APT: options.install === true ? "" : "1" }
    })
    if (result.code !== 0 || !existsSync(out)) {
      throw new Error(`building etcdload failed (bash ${script} ${out}, exit ${result.code}):\n${result.stderr}`)
    }
    return out
  })().finally(() => {
    building = undefined
  })
  return building
}

export interface EtcdLoadOptions {
  readonly op: "put" | "get"
  /** Requests in flight (Go workers), e.g. 64. */
  readonly concurrency: number
  /** Timed phase length (default 5000); ignored when `total` is set. */
  readonly durationMs?: number
  /** Stop after this many requests instead of after `durationMs`. */
  readonly total?: number
  /** PUT value size in bytes (default 256). */
  readonly valueSize?: number
  /** clientv3 clients (gRPC connections) the workers are spread over (default 4). */
  readonly conns?: number
  /** Keys picked uniformly from this many (default 10000). */
  readonly keySpace?: number
  /**
   * Per-request timeout, after which the worker counts an error and retries (default 1000). It
   * bounds the stall after a leader kill: etcd 3.4 followers keep waiting on proposals they had
   * forwarded to the dead leader until the server's own request timeout (5 s + 2 × election
   * timeout = 7 s), so with a long client timeout most workers hang that long and a 6 s run can
   * show no recovery at all. Normal PUT/GET latencies here are < 150 ms, so 1 s never fires
   * on a healthy cluster.
   */
  readonly requestTimeoutMs?: number
  /** GET with serializable (local, possibly stale) reads instead of linearizable (default false). */
  readonly serializable?: boolean
  /** Before a GET run, PUT every key once, untimed (default true for get). */
  readonly prefill?: boolean
  /** Endpoints to use (default: the cluster's live members). */
  readonly endpoints?: ReadonlyArray<string>
  /** Also report the longest completion gap ending after this offset (a kill's) and before it. */
  readonly gapFromMs?: number
}

interface EtcdLoadJson {
  readonly ops: number
  readonly errors: number
  readonly seconds: number
  readonly throughput: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly maxGapMs: number
  readonly maxGapFromMs?: number
  readonly maxGapBeforeMs?: number
  readonly cpuSeconds: number
  readonly timeline100ms: number[]
  readonly errorSamples: string[]
}

/** Parses etcdload's stdout (its last non-empty line is the JSON result) into a LoadResult. */
export const parseEtcdLoadOutput = (stdout: string): LoadResult => {
  const line = stdout.trim().split("\n").at(-1) ?? ""
  const json = JSON.parse(line) as EtcdLoadJson
  return {
    ops: json.ops,
    seconds: json.seconds,
    throughputPerSec: json.throughput,
    p50Ms: json.p50Ms,
    p99Ms: json.p99Ms,
    maxMs: json.maxMs,
    errors: json.errors,
    clientCpuSeconds: json.cpuSeconds,
    timeline100ms: json.timeline100ms,
    maxGapMs: json.maxGapMs,
    ...(json.maxGapFromMs === undefined ? {} : { maxGapFromMs: json.maxGapFromMs }),
    ...(json.maxGapBeforeMs === undefined ? {} : { maxGapBeforeMs: json.maxGapBeforeMs }),
    errorSamples: json.errorSamples
  }
}

/**
 * Runs one load against `cluster` and resolves when it has finished. Meant to be started and
 * not awaited right away when a member is to be killed mid-run. `serverCpuSeconds` covers the
 * members alive at both the start and the end.
 */
export const runEtcdLoad = async (cluster: EtcdCluster, options: EtcdLoadOptions): Promise<LoadResult> => {
  const binary = await buildEtcdLoad()
  const durationMs = options.durationMs ?? 5000
  const endpoints = options.endpoints ?? cluster.liveEndpoints()
  const common = [
    `-endpoints=${endpoints.join(",")}`,
    `-op=${options.op}`,
    `-clients=${options.concurrency}`,
    `-conns=${options.conns ?? 4}`,
    `-value-size=${options.valueSize ?? 256}`,
    `-key-space=${options.keySpace ?? 10_000}`,
    `-timeout=${options.requestTimeoutMs ?? 1000}ms`,
    `-consistency=${options.serializable === true ? "s" : "l"}`,
    ...(options.gapFromMs === undefined ? [] : [`-gap-from=${options.gapFromMs}ms`])
  ]
  if (options.op === "get" && options.prefill !== false) {
    // Prefill in a separate zero-length run, so the timed run's server CPU excludes it.
    const fill = await runMeasured(binary, [...common, "-prefill=true", "-duration=0s"], { timeoutMs: 600_000 })
    if (fill.code !== 0) throw new Error(`etcdload prefill exited with ${fill.code}:\n${fill.stderr}`)
  }
  const args = [
    ...common,
    "-prefill=false",
    options.total === undefined ? `-duration=${durationMs}ms` : `-total=${options.total}`
  ]
  const before = cluster.cpuSeconds()
  const machineBefore = machineBusyCpuSeconds()
  const run = await runMeasured(binary, args, {
    timeoutMs: (options.total === undefined ? durationMs : 600_000) + 60_000
  })
  const after = cluster.cpuSeconds()
  const machineAfter = machineBusyCpuSeconds()
  if (run.code !== 0) throw new Error(`etcdload exited with ${run.code}:\n${run.stderr}`)
  const result = parseEtcdLoadOutput(run.stdout)
  const serverCpuSeconds = Object.entries(after).reduce(
    (sum, [name, cpu]) => (before[name] === undefined ? sum : sum + cpu - before[name]),
    0
  )
  const machineCpuSeconds =
    machineBefore === undefined || machineAfter === undefined ? undefined : machineAfter - machineBefore
  return { ...result, serverCpuSeconds, ...(machineCpuSeconds === undefined ? {} : { machineCpuSeconds }) }
}
