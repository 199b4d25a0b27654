/**
 * Where one replica's CPU goes at N = 5 (or another N) under the colocated write load: V8 CPU profiles (`--cpu-prof`) of one
 * replica process, its host (main) thread and its engine thread, summarised into their top frames by self time
 * and into a few buckets (protobuf, consensus core, engine shell, NATS client, gRPC, GC, ...). The raw
 * .cpuprofile files are large; only the summary is kept (`bench/results/profiles/popuc.json`), the raw files stay
 * in a temporary directory whose path is printed.
 *
 * `pnpm bench popuc-cost --profile [--label L] [--n N] [--in-flight K] [--bundle DIR] [-- replica args]` (labels
 * keep a before and an after side by side; N = 5 and 128 in flight unless told, 0 in flight profiles an idle
 * group; DIR a saved bundle to profile instead of this build, see popuc-cost.ts). Frames are named by their
 * TypeScript source (the bundle's source maps).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { resultsDir } from "../harness/index.js"
import { runKvLoad } from "../kv-load.js"
import { startGroup } from "../popuc-group.js"
import { round } from "../report.js"

interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
    readonly columnNumber: number
  }
  readonly children?: ReadonlyArray<number>
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
  readonly startTime: number
  readonly endTime: number
}

/** Short location: the package-relative path of a frame's script. */
const where = (url: string): string => {
  const at = url.search(/(actors|libs|services|node_modules)\//)
  const path = at < 0 ? url.replace(/^file:\/\//, "") : url.slice(at)
  return path.replace(/node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")
}

const sourceMaps = new Map<string, SourceMap | undefined>()

/** The source map beside a bundled script (`pnpm build` writes one per chunk); undefined for any other script. */
const sourceMapOf = (url: string): SourceMap | undefined => {
  if (!sourceMaps.has(url)) {
    let map: SourceMap | undefined
    try {
      map = url.startsWith("file:")
        ? new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, "utf8")))
        : undefined
    } catch {
      map = undefined
    }
    sourceMaps.set(url, map)
  }
  return sourceMaps.get(url)
}

/** Where a frame's code was written: through the bundle's source map to the TypeScript source, when it has one. */
const originalOf = (frame: ProfileNode["callFrame"]): { readonly url: string; readonly line: number } => {
  const entry = sourceMapOf(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber)
  return entry !== undefined && "originalSource" in entry
    ? { url: entry.originalSource, line: entry.originalLine }
    : { url: frame.url, line: frame.lineNumber }
}

/** The bucket a frame's self time counts in. */
const bucketOf = (fn: string, url: string): string => {
  if (fn === "(garbage collector)") return "gc"
  if (fn === "(idle)" || fn === "(program)") return fn
  if (url.includes("protobufjs") || url.includes("/gen/") || url.includes("proto/dist") || url.includes("@bufbuild"))
    return "protobuf"
  if (url.includes("nic/dist/core") || url.includes("nic/src/core")) return "consensus core"
  if (url.includes("/nic/")) return "engine shell"
  if (url.includes("@nats-io")) return "nats client"
  if (url.includes("grpc")) return "grpc"
  if (url.includes("/replica/")) return "replica host"
  if (url.includes("/kernel/")) return "kernel"
  if (url.includes("effect")) return "effect"
  if (url.startsWith("node:") || url === "") return "node internals / native"
  return "other"
}

export interface ProfileSummary {
  readonly thread: string
  readonly seconds: number
  readonly busySeconds: number
  readonly buckets: Record<string, number>
  readonly topFrames: ReadonlyArray<{ readonly frame: string; readonly selfPct: number; readonly selfMs: number }>
}

/**
 * Self time per frame and per bucket, as shares of the thread's busy (non-idle) time, counting only samples
 * inside `window` (CLOCK_MONOTONIC µs, V8's profile clock on Linux): the measured load, not start-up.
 */
export const summarizeProfile = (
  thread: string,
  profile: CpuProfile,
  window: { readonly fromUs: number; readonly toUs: number },
  top = 25
): ProfileSummary => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  let at = profile.startTime
  let firstUs = Number.POSITIVE_INFINITY
  let lastUs = 0
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (at < window.fromUs || at > window.toUs) return
    firstUs = Math.min(firstUs, at)
    lastUs = Math.max(lastUs, at)
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta)
  })
  const frames = new Map<string, number>()
  const buckets = new Map<string, number>()
  let busy = 0
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (node === undefined) continue
    const { functionName } = node.callFrame
    const { url, line: lineNumber } = originalOf(node.callFrame)
    const bucket = bucketOf(functionName, url)
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + us)
    if (bucket === "(idle)" || bucket === "(program)") continue
    busy += us
    const frame = `${functionName || "(anonymous)"} ${where(url)}:${lineNumber + 1}`
    frames.set(frame, (frames.get(frame) ?? 0) + us)
  }
  const pct = (us: number) => round((100 * us) / Math.max(1, busy), 1)
  return {
    thread,
    seconds: round(Math.max(0, lastUs - firstUs) / 1e6, 1),
    busySeconds: round(busy / 1e6, 2),
    buckets: Object.fromEntries(
      [...buckets]
        .filter(([b]) => b !== "(idle)" && b !== "(program)")
        .sort((a, b) => b[1] - a[1])
        .map(([b, us]) => [b, pct(us)])
    ),
    topFrames: [...frames]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([frame, us]) => ({ frame, selfPct: pct(us), selfMs: round(us / 1000, 0) }))
  }
}

/**
 * A V8 profile holds one thread. The engine thread's is the one whose frames include the engine loop; the
 * host's the one with the replica's gRPC service.
 */
const threadOf = (profile: CpuProfile): string => {
  const urls = profile.nodes.map((n) => n.callFrame.url)
  if (urls.some((u) => u.includes("engine-worker"))) return "engine"
  return "host"
}

export const profileReplica = (options: {
  readonly n: number
  readonly warmUpMs: number
  readonly loadMs: number
  readonly concurrency: number
  readonly args: ReadonlyArray<string>
  /** Another build's `reef` entry (popuc-group.ts startGroup). */
  readonly entry?: string
}) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "reef-cpu-prof-"))
    const nats = yield* startNatsServer({ jetstream: false })
    const writes = yield* Effect.scoped(
      Effect.gen(function* () {
        const group = yield* startGroup(
          nats.url,
          options.n,
          `prof${options.n}`,
          options.args,
          (i) => (i === 0 ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : []),
          undefined,
          options.entry
        )
        // Nothing in flight profiles an idle group: what a replica costs per second whatever it serves.
        const load = (durationMs: number) =>
          options.concurrency === 0
            ? Effect.as(Effect.sleep(durationMs), { throughputPerSec: 0 })
            : runKvLoad({
                addresses: group.addresses,
                mode: "colocated",
                op: "set",
                concurrency: options.concurrency,
                durationMs
              })
        yield* load(options.warmUpMs)
        const fromUs = nowUs()
        const measured = yield* load(options.loadMs)
        const toUs = nowUs()
        // The profiles are written as the threads exit: stop the profiled replica alone, first.
        group.children[0]?.kill("SIGTERM")
        for (let i = 0; i < 300 && readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).length < 2; i++) {
          yield* Effect.sleep("100 millis")
        }
        return { measured, window: { fromUs, toUs } }
      })
    )
    const profiles = yield* Effect.forEach(
      readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")),
      (f) => readWhole(join(dir, f))
    )
    return {
      dir,
      writesPerSec: round(writes.measured.throughputPerSec, 0),
      summaries: profiles.map((p) => summarizeProfile(threadOf(p), p, writes.window))
    }
  }).pipe(Effect.scoped)

/** A profile file once the exiting thread has written all of it (it appears before it is whole). */
const readWhole = (path: string) =>
  Effect.try(() => JSON.parse(readFileSync(path, "utf8")) as CpuProfile).pipe(
    Effect.retry({ times: 100, schedule: Schedule.spaced("100 millis") }),
    Effect.orDie
  )

/** CLOCK_MONOTONIC in µs, the clock V8 stamps profiles with on Linux. */
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n)

const flagValue = (flags: ReadonlyArray<string>, name: string): string | undefined => {
  const at = flags.indexOf(name)
  return at < 0 ? undefined : flags[at + 1]
}

export const profileOnly = async (flags: ReadonlyArray<string>) => {
  const label = flagValue(flags, "--label") ?? "current"
  const n = Number(flagValue(flags, "--n") ?? 5)
  const concurrency = Number(flagValue(flags, "--in-flight") ?? 128)
  const bundle = flagValue(flags, "--bundle")
  const dash = flags.indexOf("--")
  const args = dash < 0 ? [] : flags.slice(dash + 1)
  const result = await Effect.runPromise(
    profileReplica({
      n,
      warmUpMs: 8_000,
      loadMs: 10_000,
      concurrency,
      args,
      ...(bundle === undefined ? {} : { entry: join(bundle, "reef.mjs") })
    })
  )
  // A directory of its own: bench/results/*.json are suite results (harness/summary.ts reads them all).
  const dir = join(resultsDir, "profiles")
  mkdirSync(dir, { recursive: true })
  const path = join(dir, "popuc.json")
  const previous = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>) : {}
  const entry = {
    command: `pnpm bench popuc-cost ${flags.join(" ")}`,
    date: new Date().toISOString(),
    n,
    inFlight: concurrency,
    replicaArgs: args,
    writesPerSec: result.writesPerSec,
    threads: result.summaries
  }
  writeFileSync(path, `${JSON.stringify({ ...previous, [label]: entry }, null, 2)}\n`)
  for (const s of result.summaries) {
    console.log(`\n${s.thread} thread: ${s.busySeconds} s busy of ${s.seconds} s`)
    console.log(
      `  buckets: ${Object.entries(s.buckets)
        .map(([b, p]) => `${b} ${p}%`)
        .join(", ")}`
    )
    for (const f of s.topFrames.slice(0, 15)) console.log(`  ${String(f.selfPct).padStart(5)}%  ${f.frame}`)
  }
  console.log(`\nwrote ${path}; raw profiles in ${result.dir}`)
}
