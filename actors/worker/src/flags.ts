/** `reef run worker` flags. A bad value is an error naming the flag, never a silent default. */
import type { RunWorkerOptions } from "./run-worker.js"

export const WORKER_FLAGS = "--cores N (virtual cores, default 4)  --coordinator ID (default c1)"

export const parseWorkerFlags = (id: string, flags: Readonly<Record<string, string | undefined>>): RunWorkerOptions => {
  const raw = flags.cores
  let cores: number | undefined
  if (raw !== undefined) {
    cores = Number(raw)
    if (!Number.isInteger(cores) || cores < 1 || cores > 1024)
      throw new Error(`--cores must be an integer in 1..1024, got "${raw}"`)
  }
  const coordinator = flags.coordinator
  return { id, ...(cores === undefined ? {} : { cores }), ...(coordinator === undefined ? {} : { coordinator }) }
}
