/**
 * Host thread priority. The engines are the timing-critical part (the paper's FPGA): a round that closes late
 * turns a correct peer into a suspect, and enough of those make a replica self-quit. Under load the host's
 * client work must therefore wait for the engines' timers, not the reverse.
 */
import { readdirSync } from "node:fs"
import os from "node:os"

/** When a round closes (engine.ts `EngineOptions.roundClose`). */
export type RoundClose = "allHeard" | "timer"

/**
 * Timed rounds: 5, so the host's client work waits for the engines' timers (see `yieldHostToEngines`).
 * Rounds closed on all heard: 0. There a round lasts as long as its messages take and the host is the other
 * half of every write's path: holding it back slowed writes (bench/results/popuc.json) and saved no self-quit.
 */
export const defaultHostNice = (roundClose: RoundClose): number => (roundClose === "timer" ? 5 : 0)

/**
 * Linux nice values are per thread, so every thread of this process but the engines' gets `nice`: the host
 * thread, and V8's and libuv's helper threads (background compilation of the host's code used to compete with
 * the engines at the start of a load burst). Threads started later inherit the nice value of the thread that
 * starts them. Raising a nice value needs no privilege; a thread already nicer than `nice` is left alone. Off
 * Linux only the calling thread is changed. Returns what went wrong, if anything, for the caller to log.
 */
export const yieldHostToEngines = (
  nice: number,
  engineThreads: ReadonlyArray<number | undefined>
): string | undefined => {
  if (nice <= 0) return undefined
  const lower = (tid: number) => {
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice)
  }
  try {
    lower(0)
    if (engineThreads.some((tid) => tid === undefined)) return undefined
    for (const entry of readdirSync("/proc/self/task")) {
      const tid = Number(entry)
      if (!engineThreads.includes(tid)) {
        try {
          lower(tid)
        } catch {
          // The thread ended meanwhile.
        }
      }
    }
    return undefined
  } catch (error) {
    return `could not lower the host's priority below the engines': ${String(error)}`
  }
}
