/**
 * What a benchmark host needs to run an actor: a kernel on its own NATS connection in a given cluster, built in
 * a scope the host closes when the configuration ends, and the process's memory.
 */
import { readFileSync } from "node:fs"
import { inScope } from "@reef/devkit"
import { type Kernel, natsKernelLayer } from "@reef/kernel"
import type * as Layer from "effect/Layer"
import { round } from "../report.js"

export const kernelFor = (natsUrl: string, cluster: string, name: string): Layer.Layer<Kernel, unknown> =>
  natsKernelLayer({ servers: natsUrl, name }, { cluster }) as Layer.Layer<Kernel, unknown>

export { inScope }

/** RSS of this process now and at its peak (VmHWM), in MB. */
export const memoryMb = (): { readonly rssMb: number; readonly peakRssMb: number } => {
  const status = readFileSync("/proc/self/status", "utf8")
  const field = (name: string) => round(Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024, 1)
  return { rssMb: field("VmRSS"), peakRssMb: field("VmHWM") }
}
