/**
 * A wake-up at sub-millisecond precision for the link proxy. Node's timers count whole milliseconds (a
 * `setTimeout(f, 1)` fires 1–2 ms later), too coarse for 100 µs of added delay, and spinning on
 * `setImmediate` would burn a core of a shared 2-core machine. A worker thread sleeps in `Atomics.wait`
 * (futex, fractional milliseconds) until the earliest deadline and posts a message that wakes the event loop.
 * Deadlines are `process.hrtime` milliseconds, the same clock in both threads.
 */
import { Worker } from "node:worker_threads"

const NO_DEADLINE = BigInt(Number.MAX_SAFE_INTEGER)

export interface PreciseTimer {
  /** Calls the timer's callback at `atNs` (hrtime ns) or soon after, unless an earlier wake-up is already due. */
  readonly wakeAt: (atNs: bigint) => void
  readonly close: () => Promise<void>
}

/** Shared words: [0] the earliest deadline in ns (NO_DEADLINE: none); [1] a change counter to wait on. */
const layout = (buffer: SharedArrayBuffer) => ({
  deadline: new BigInt64Array(buffer, 0, 1),
  changes: new Int32Array(buffer, 8, 1)
})

export const makePreciseTimer = (onWake: () => void): PreciseTimer => {
  const buffer = new SharedArrayBuffer(16)
  const { deadline, changes } = layout(buffer)
  deadline[0] = NO_DEADLINE
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: buffer })
  worker.unref()
  worker.on("message", onWake)
  return {
    wakeAt: (atNs) => {
      for (;;) {
        const current = Atomics.load(deadline, 0)
        if (current <= atNs) return
        if (Atomics.compareExchange(deadline, 0, current, atNs) === current) break
      }
      Atomics.add(changes, 0, 1)
      Atomics.notify(changes, 0)
    },
    close: () => worker.terminate().then(() => undefined)
  }
}

/**
 * The worker, as source evaluated in the thread (a file would need the TypeScript loader there too): sleeps
 * until the earliest deadline or a change, clears the deadline and wakes the main thread.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const NO_DEADLINE = ${NO_DEADLINE}n
const deadline = new BigInt64Array(workerData, 0, 1)
const changes = new Int32Array(workerData, 8, 1)
for (;;) {
  const seen = Atomics.load(changes, 0)
  const due = Atomics.load(deadline, 0)
  const waitNs = due - process.hrtime.bigint()
  if (due !== NO_DEADLINE && waitNs <= 0n) {
    if (Atomics.compareExchange(deadline, 0, due, NO_DEADLINE) === due) parentPort.postMessage(0)
    continue
  }
  Atomics.wait(changes, 0, seen, due === NO_DEADLINE ? undefined : Number(waitNs) / 1e6)
}
`
