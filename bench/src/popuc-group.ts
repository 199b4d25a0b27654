/**
 * A POPUC group of replica processes for the benchmarks (`reef run replica`, one process each, on one
 * nats-server), and what a benchmark reads back from it: engine stats over gRPC and RSS from /proc.
 */
import { readFileSync } from "node:fs"
import { startReefChild, stopTogetherOnClose } from "@reef/devkit"
import { freePort } from "@reef/kernel"
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { round } from "./report.js"

export const BENCH_CLUSTER = "bench"

/** A /proc/<pid>/status field in MB (VmHWM: peak, VmRSS: current); undefined once the process is gone. */
export const procMemoryMb = (pid: number, field: "VmHWM" | "VmRSS"): number | undefined => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)
    return match ? round(Number(match[1]) / 1024, 1) : undefined
  } catch {
    return undefined
  }
}

/** The largest RSS among a group's live replica processes, in MB: now (VmRSS) or the peak so far (VmHWM). */
export const largestRssMb = (group: Pick<Group, "children">, field: "VmHWM" | "VmRSS"): number =>
  Math.max(
    0,
    ...group.children
      .map((c) => (c.pid === undefined ? undefined : procMemoryMb(c.pid, field)))
      .filter((x): x is number => x !== undefined)
  )

/**
 * A POPUC group of `n` replica processes, in the current scope; `extraArgs` go to every `reef run replica`.
 * `restart(i)` starts replica i again with the same arguments (after a kill: a new incarnation), in the scope
 * it is run in; `onLine` sees each of its output lines as it comes.
 */
export const startGroup = (
  natsUrl: string,
  n: number,
  group: string,
  extraArgs: ReadonlyArray<string> = [],
  /** Extra node flags of replica i (e.g. --cpu-prof for one of them). */
  nodeFlagsOf: (i: number) => ReadonlyArray<string> = () => [],
  /** Replica i on a host of `@reef/devkit/hosts`: its host's server, KV port on its address (bench/src/hosts). */
  placement?: (i: number) => {
    readonly natsUrl: string
    readonly address: string
    readonly prefix: ReadonlyArray<string>
  },
  /** Another build's `reef` entry to run (a saved bundle to compare with); this checkout's build otherwise. */
  entry?: string
) =>
  Effect.gen(function* () {
    const ids = Array.from({ length: n }, (_, i) => `r${i + 1}`)
    const ports = yield* Effect.forEach(ids, () => freePort)
    const startReplica = (i: number, onLine?: (line: string) => void) => {
      const id = ids[i]!
      // An error's detail (its cause, the stack) follows on the next lines: print those too.
      let detailLines = 0
      return startReefChild({
        name: `replica/${id}`,
        args: [
          "run",
          "replica",
          "--id",
          id,
          "--nats",
          placement?.(i).natsUrl ?? natsUrl,
          "--cluster",
          BENCH_CLUSTER,
          "--group",
          group,
          "--members",
          ids.join(","),
          "--kv-port",
          String(ports[i]),
          ...(placement === undefined ? [] : ["--kv-host", placement(i).address]),
          ...extraArgs
        ],
        ...(placement === undefined ? {} : { prefix: placement(i).prefix }),
        env: { OTEL_SDK_DISABLED: "true" },
        nodeFlags: nodeFlagsOf(i),
        ...(entry === undefined ? {} : { entry }),
        startTimeoutMs: 90_000,
        onLine: (line) => {
          onLine?.(line)
          if (line.includes("ERROR")) detailLines = 12
          else if (detailLines > 0) detailLines--
          if (line.includes("self-quit") || line.includes("ERROR") || detailLines > 0) {
            console.log(`  [${group}/${id}] ${line}`)
          }
        }
      })
    }
    const children = yield* Effect.forEach(ids, (_, i) => startReplica(i), { concurrency: "unbounded" })
    yield* stopTogetherOnClose(children)
    return {
      ids,
      addresses: ports.map((p, i) => `${placement?.(i).address ?? "127.0.0.1"}:${p}`),
      children,
      restart: startReplica
    }
  })

export type Group = Effect.Effect.Success<ReturnType<typeof startGroup>>

export const engineStates = (group: Group) =>
  Effect.gen(function* () {
    const client = yield* makeKvClient({ replicas: group.addresses })
    return yield* Effect.forEach(group.addresses, (_, i) => client.state(i).pipe(Effect.option))
  }).pipe(Effect.scoped)
