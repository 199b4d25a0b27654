/**
 * The Remora benchmark's processes, seen from the benchmark: a coordinator host and worker hosts (host.ts, each
 * its own OS process with jemalloc and the actors' V8 flags), and one configuration run across them: a fresh
 * cluster, a worker actor in each of the first `workers` worker hosts, the coordinator's experiment, then the
 * workers stopped again.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { allocatorEnv, killOnExit, REEF_NODE_FLAGS } from "@reef/devkit"
import type { Experiment, ExperimentResult } from "./experiment.js"
import type { HostCommand } from "./host.js"

const here = dirname(fileURLToPath(import.meta.url))

export class Host {
  private readonly waiting: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void }> = []
  private stderr = ""
  readonly ready: Promise<unknown>

  constructor(
    readonly name: string,
    readonly child: ChildProcess
  ) {
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-8192)
      if (process.env.REMORA_BENCH_DEBUG) process.stderr.write(`[${name}] ${chunk}`)
    })
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("{")) {
        if (process.env.REMORA_BENCH_DEBUG) process.stderr.write(`[${name}] ${line}\n`)
        return
      }
      const reply = JSON.parse(line) as { ok: boolean; value?: unknown; error?: string }
      const w = this.waiting.shift()
      if (w === undefined) return
      if (reply.ok) w.resolve(reply.value)
      else w.reject(new Error(`${name}: ${reply.error}`))
    })
    child.once("exit", (code, signal) => {
      for (const w of this.waiting.splice(0)) {
        w.reject(new Error(`${name} exited (${code ?? signal}):\n${this.stderr}`))
      }
    })
    this.ready = new Promise((resolve, reject) => this.waiting.push({ resolve, reject }))
  }

  send<T>(command: HostCommand): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ resolve: resolve as (v: unknown) => void, reject })
      this.child.stdin!.write(`${JSON.stringify(command)}\n`)
    })
  }

  memory(): Promise<{ readonly rssMb: number; readonly peakRssMb: number }> {
    return this.send({ op: "memory" })
  }

  /** CPU seconds (user + system) this host used so far; 0 once it is gone. */
  cpuSeconds(): number {
    try {
      const fields = readFileSync(`/proc/${this.child.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
      return (Number(fields[11]) + Number(fields[12])) / 100
    } catch {
      return 0
    }
  }

  /** Lower this host's CPU priority (workers that must not take the coordinator's core). */
  renice(niceness: number): void {
    if (this.child.pid !== undefined) spawnSync("renice", ["-n", String(niceness), "-p", String(this.child.pid)])
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise((resolve) => this.child.once("exit", resolve))
    this.child.stdin!.end()
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000)
    await exited
    clearTimeout(timer)
  }
}

/** REMORA_BENCH_PROFILE_DIR: the coordinator host writes a V8 CPU profile there when it exits. */
const profileFlags = (name: string): ReadonlyArray<string> => {
  const dir = process.env.REMORA_BENCH_PROFILE_DIR
  return dir === undefined || name !== "coordinator" ? [] : ["--cpu-prof", `--cpu-prof-dir=${dir}`]
}

export const startHost = (name: string, natsUrl: string): Host => {
  const args = [...REEF_NODE_FLAGS, ...profileFlags(name), join(here, "host.js"), JSON.stringify({ natsUrl })]
  const child = killOnExit(
    spawn(process.execPath, args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...allocatorEnv(), OTEL_SDK_DISABLED: "true" }
    })
  )
  return new Host(name, child)
}

export interface Hosts {
  readonly coordinator: Host
  readonly workers: ReadonlyArray<Host>
}

export const startHosts = async (natsUrl: string, workers: number): Promise<Hosts> => {
  const hosts = {
    coordinator: startHost("coordinator", natsUrl),
    workers: Array.from({ length: workers }, (_, i) => startHost(`worker-${i + 1}`, natsUrl))
  }
  await Promise.all([hosts.coordinator.ready, ...hosts.workers.map((w) => w.ready)])
  return hosts
}

let configurations = 0

/** Runs one configuration on a fresh cluster with `workers` worker actors of `cores` virtual cores each. */
export const runConfiguration = async (
  hosts: Hosts,
  workers: number,
  cores: number,
  experiment: Omit<Experiment, "cluster" | "workers">
): Promise<ExperimentResult> => {
  const cluster = `remora-bench-${process.pid}-${++configurations}`
  const used = hosts.workers.slice(0, workers)
  await Promise.all(used.map((h, i) => h.send({ op: "start", cluster, id: `w${i + 1}`, cores })))
  try {
    return await hosts.coordinator.send<ExperimentResult>({
      op: "run",
      experiment: { ...experiment, cluster, workers }
    })
  } finally {
    await Promise.all(used.map((h) => h.send({ op: "stop" })))
  }
}
