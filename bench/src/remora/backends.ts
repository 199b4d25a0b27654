/**
 * The two backends Figs. 4-7 run on (figures.ts): the seeded simulator, and real processes over NATS.
 */
import type { YcsbOptions } from "@reef/remora"
import type { Backend, FigureConfig } from "./figures.js"
import { type Hosts, runConfiguration } from "./hosts.js"
import { simRun } from "./sim-run.js"

const BLOCK_INTERVAL_MS = 20
const MAX_BLOCK_TXS = 2000
/** The consensus window of throughput runs: it only adds latency, so a short one shortens the warm-up. */
const THROUGHPUT_WINDOW_MS = 50

const capacityOf = (cores: number) => (workers: number, w: YcsbOptions) =>
  (workers * cores * 1e6) / Math.max(1, w.statelessCostUs + w.statefulCostUs)

/**
 * The simulator: time ×4 (service 2 ms + 2 ms, one-way message delay 0.4-1.6 ms: the paper's 0.5 + 0.5 ms and
 * 0.1-0.4 ms), 16 virtual cores per worker (the paper's workers have 32 vCPUs). Saturation is a closed loop of
 * clients keeping an eighth of a second of capacity outstanding. `seed` draws the workload, the network delays
 * and the coordinator's randomness: the suite repeats every figure over several seeds.
 */
export const simBackend = (quick: boolean, coresPerWorker = 16, seed = 1): Backend => {
  const timeScale = 4
  const capacity = capacityOf(coresPerWorker)
  const warmupMs = quick ? 250 : 300
  const measureMs = quick ? 150 : 300
  return {
    name: "simulator (real cores in-process, virtual time, modelled network)",
    timeScale,
    coresPerWorker,
    capacity,
    measure: async (c: FigureConfig) => {
      const max = capacity(c.workers, c.workload)
      const rate = c.load.kind === "rate"
      const r = simRun({
        workers: c.workers,
        cores: coresPerWorker,
        params: c.params,
        workload: c.workload,
        windowMs: c.windowMs ?? THROUGHPUT_WINDOW_MS,
        blockIntervalMs: BLOCK_INTERVAL_MS,
        maxBlockTxs: MAX_BLOCK_TXS,
        netDelayMs: [0.1 * timeScale, 0.4 * timeScale],
        load:
          c.load.kind === "rate"
            ? { perSecond: Math.ceil(max * c.load.shareOfCapacity) }
            : { outstanding: Math.max(400, Math.ceil(max / 8)), maxTps: max },
        warmupMs: rate ? 400 : warmupMs,
        measureMs,
        drainMs: rate ? 1000 : 0,
        seed
      })
      if (r.crash !== undefined) throw new Error(`${c.figure} ${c.name}: the simulated run failed: ${r.crash}`)
      // Yield between configurations so a signal can stop the run.
      await new Promise((resolve) => setImmediate(resolve))
      return r
    }
  }
}

/**
 * Real coordinator and worker processes over NATS: time ×40 and 2 virtual cores per worker, so the real CPU per
 * transaction (Ed25519 checks, messages) stays a small share of two cores. Saturation offers a quarter more
 * than the configuration's capacity.
 */
export const realBackend = (hosts: Hosts, quick: boolean): Backend => {
  const coresPerWorker = 2
  const capacity = capacityOf(coresPerWorker)
  const warmupMs = quick ? 1000 : 1500
  const measureMs = quick ? 1500 : 3000
  return {
    name: "real coordinator and worker processes over NATS",
    timeScale: 40,
    coresPerWorker,
    capacity,
    measure: async (c: FigureConfig) => {
      const max = capacity(c.workers, c.workload)
      const r = await runConfiguration(hosts, c.workers, coresPerWorker, {
        params: c.params,
        windowMs: c.windowMs ?? THROUGHPUT_WINDOW_MS,
        blockIntervalMs: BLOCK_INTERVAL_MS,
        maxBlockTxs: MAX_BLOCK_TXS,
        workload: c.workload,
        load:
          c.load.kind === "rate"
            ? { kind: "rate", perSecond: Math.ceil(max * c.load.shareOfCapacity), warmupMs: 1000, measureMs }
            : { kind: "saturate", perSecond: Math.ceil(max * 1.25), warmupMs, measureMs }
      })
      return r
    }
  }
}
