/**
 * What a benchmark host needs to run an actor: a kernel on its own NATS connection in a given cluster, built in
 * a scope the host closes when the configuration ends, and the process's memory.
 */
import { readFileSync } from "node:fs"
import { inScope } from "@reef/devkit"
import { type Kernel, natsKernelLayer } from "@reef/kernel"
import type * as Layer from "effect/Layer"
import { round } from "../report.js"

/**
 * The fault-free configurations (Figs. 4-7, 11) measure scheduling and dispatch, not failure detection: on a
 * machine shared with other sessions a process can be starved of CPU for seconds, and the default detector
 * (left after 5 s without a heartbeat) would then declare a live worker gone and start a recovery that rolls
 * every worker back (remora-findings.md). Here a worker counts as gone only after a minute of silence; Fig. 8
 * (fig8.ts) runs `reef run` processes with the defaults, since failure handling is what it measures.
 */
export const FAULT_FREE_MEMBERSHIP = { suspectAfterMs: 30_000, leftAfterMs: 60_000 } as const

export const kernelFor = (natsUrl: string, cluster: string, name: string): Layer.Layer<Kernel, unknown> =>
  natsKernelLayer(
    { servers: natsUrl, name },
    { cluster, membership: { ...FAULT_FREE_MEMBERSHIP, forgetAfterMs: 120_000 } }
  ) as Layer.Layer<Kernel, unknown>

export { inScope }

/** RSS of this process now and at its peak (VmHWM), in MB. */
export const memoryMb = (): { readonly rssMb: number; readonly peakRssMb: number } => {
  const status = readFileSync("/proc/self/status", "utf8")
  const field = (name: string) => round(Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024, 1)
  return { rssMb: field("VmRSS"), peakRssMb: field("VmHWM") }
}
