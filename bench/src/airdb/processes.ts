/**
 * The benchmark's child processes: load processes and SLSMR servers (compiled JS next to this file, each its
 * own OS process and event loop), started with a JSON spec and answering with JSON lines. Every child is
 * killed if the benchmark exits first.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { killOnExit } from "@reef/devkit"
import { encodeHistogram, mergeHistograms, summarize } from "../harness/histogram.js"
import type { LoadOutput, LoadSpec } from "./load-process.js"

const here = dirname(fileURLToPath(import.meta.url))

export interface Child<T> {
  readonly child: ChildProcess
  /** The first JSON line the child prints (its result, or its "ready"). */
  readonly first: Promise<T>
  readonly exited: Promise<void>
  kill(signal?: NodeJS.Signals): Promise<void>
}

export const startChild = <T>(
  script: "load-process" | "server-process",
  spec: unknown,
  options: { readonly nice?: number; readonly heapMb?: number } = {}
): Child<T> => {
  const node = [
    ...(options.heapMb === undefined ? [] : [`--max-old-space-size=${options.heapMb}`]),
    join(here, `${script}.js`),
    JSON.stringify(spec)
  ]
  const command = options.nice === undefined ? process.execPath : "nice"
  const args = options.nice === undefined ? node : ["-n", String(options.nice), process.execPath, ...node]
  const child = killOnExit(spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] }))
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8192)
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const first = new Promise<T>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    // Log lines may come first: the answer is the first line that is a JSON object.
    const onLine = (line: string) => {
      if (!line.startsWith("{")) return
      lines.off("line", onLine)
      try {
        resolve(JSON.parse(line) as T)
      } catch (e) {
        reject(new Error(`${script}: bad output ${line}: ${e}`))
      }
    }
    lines.on("line", onLine)
    child.once("exit", (code, signal) =>
      reject(new Error(`${script} exited (${code ?? signal}) without a result:\n${stderr}`))
    )
  })
  first.catch(() => {})
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    await exited
  }
  return { child, first, exited, kill }
}

/** Runs one load process to completion. */
export const runLoad = (spec: LoadSpec, options: { readonly nice?: number } = {}): Promise<LoadOutput> =>
  startChild<LoadOutput>("load-process", spec, options).first

/** Runs several load processes at once; sums their throughputs and merges their latency histograms. */
export const runLoads = async (specs: ReadonlyArray<LoadSpec>): Promise<LoadOutput> => {
  const outs = await Promise.all(specs.map((s) => runLoad(s)))
  const sum = (f: (o: LoadOutput) => number) => outs.reduce((a, o) => a + f(o), 0)
  const timeline: Array<number> = []
  for (const o of outs) {
    for (const [i, n] of o.timeline100ms.entries()) timeline[i] = (timeline[i] ?? 0) + n
  }
  const merged = mergeHistograms(outs.map((o) => o.histogram))
  const latency = summarize(merged)
  return {
    ops: sum((o) => o.ops),
    errors: sum((o) => o.errors),
    seconds: outs[0]?.seconds ?? 0,
    throughput: sum((o) => o.throughput),
    // Percentiles of every operation of every process: one merged histogram.
    p50Ms: latency.p50Ms,
    p99Ms: latency.p99Ms,
    maxMs: latency.maxMs,
    histogram: encodeHistogram(merged),
    timeline100ms: timeline,
    withinSla: sum((o) => o.withinSla),
    late: sum((o) => o.late),
    unreachable: sum((o) => o.unreachable),
    aborts: sum((o) => o.aborts)
  }
}
