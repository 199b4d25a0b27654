import { describe, expect, it } from "vitest"
import { checkResult, renderSvg, vegaLiteSpec } from "../harness/index.js"
import { timelineOf } from "./fig8.js"
import {
  type Fig10Completion,
  type Fig10Mode,
  type Fig10Run,
  fig10Settings,
  movedSummary,
  phaseStats,
  phaseWindows
} from "./fig10.js"
import { fig10Report } from "./fig10-report.js"

/** `perSecond` completions evenly over [fromS, toS) of transactions from `phase`, on `workers` in turn. */
const steady = (
  fromS: number,
  toS: number,
  perSecond: number,
  phase: number,
  options: { latencyMs?: number; transfers?: number; workers?: ReadonlyArray<string> } = {}
): Array<Fig10Completion> =>
  Array.from({ length: Math.round((toS - fromS) * perSecond) }, (_, i) => ({
    at: fromS * 1000 + (i * 1000) / perSecond,
    latencyMs: options.latencyMs ?? 10,
    leaseTransfers: options.transfers ?? 0,
    worker: (options.workers ?? ["w1"])[i % (options.workers ?? ["w1"]).length]!,
    phase
  }))

describe("Fig. 10 phases", () => {
  it("counts throughput by completion time, and latency, transfers and spread by the transaction's phase", () => {
    const completions = [
      ...steady(0, 2, 100, 0, { latencyMs: 5, transfers: 1, workers: ["w1", "w2"] }),
      // Phase 1's transactions: half complete late, in phase 2's window, and slower, all on w3.
      ...steady(2, 3, 50, 1, { latencyMs: 20, transfers: 2, workers: ["w3"] }),
      ...steady(4, 5, 50, 1, { latencyMs: 1000, transfers: 2, workers: ["w3"] })
    ]
    const windows = phaseWindows("offered", { ...fig10Settings(true), phases: 3, phaseSeconds: 2 }, [], 0)
    expect(windows).toEqual([
      [0, 2000],
      [2000, 4000],
      [4000, 6000]
    ])
    const [p0, p1, p2] = phaseStats(completions, windows)
    expect(p0).toMatchObject({ fromS: 0, toS: 2, tps: 100, p50Ms: 5, p90Ms: 5, leaseTransfers: 200, transfersPerTx: 1 })
    expect(p0!.busiestWorkerShare).toBe(0.5)
    expect(p1).toMatchObject({ tps: 25, answered: 100, leaseTransfers: 200, transfersPerTx: 2 })
    expect(p1!.p90Ms).toBe(1000)
    expect(p1!.busiestWorkerShare).toBe(1)
    expect(p2).toMatchObject({ tps: 25, answered: 0 })
    expect(p2!.p90Ms).toBeNaN()
    const moved = movedSummary(completions, [p0!, p1!, p2!])
    expect(moved.movedTps).toBe(25)
    expect(moved.movedP90Ms).toBe(1000)
    expect(moved.movedTransfersPerTx).toBe(2)
  })

  it("saturated phases run from one phase's first submission to the next one's, the last to the end", () => {
    const settings = { ...fig10Settings(true), phases: 3 }
    expect(phaseWindows("saturated", settings, [0, 1500, 4000], 9000)).toEqual([
      [0, 1500],
      [1500, 4000],
      [4000, 9000]
    ])
    // 300 completions over the 1.5 s of phase 0: 200 tx/s; none in a phase never started.
    const completions = steady(0, 1.5, 200, 0)
    const [p0, , p2] = phaseStats(completions, phaseWindows("saturated", settings, [0, 1500], 1500))
    expect(p0!.tps).toBe(200)
    expect(p2!.tps).toBeNaN()
  })
})

describe("Fig. 10 report", () => {
  const settings = { ...fig10Settings(true), phases: 2, phaseSeconds: 2 }
  const run = (
    policy: string,
    workload: "tpcc" | "ethereum",
    mode: Fig10Mode,
    tps: number,
    transfers: number
  ): Fig10Run => {
    const completions = [
      ...steady(0, 2, tps, 0, { transfers, workers: ["w1", "w2", "w3"] }),
      ...steady(2, 4, tps, 1, { latencyMs: 40, transfers, workers: ["w1", "w2", "w3"] })
    ]
    const phases = phaseStats(completions, phaseWindows(mode, settings, [0, 2000], 4000))
    return {
      policy: policy as Fig10Run["policy"],
      workload,
      mode,
      phases,
      timeline: timelineOf(completions, 4000),
      ...movedSummary(completions, phases),
      submitted: completions.length,
      answered: completions.length,
      refused: 0,
      recoveries: 0,
      crashes: []
    }
  }
  /** A cluster's four runs; saturated throughput is 1.5 times the offered one. */
  const both = (policy: string, tpccTps: number, ethereumTps: number, transfers: number) =>
    (["offered", "saturated"] as const).flatMap((mode) => {
      const k = mode === "saturated" ? 1.5 : 1
      return [
        run(policy, "tpcc", mode, tpccTps * k, transfers),
        run(policy, "ethereum", mode, ethereumTps * k, transfers)
      ]
    })
  const rounds = (sfsTransfers: number) =>
    [0, 1].map((index) => ({
      index,
      machine: { loadavgBefore: 1, loadavgAfter: 1, stealPct: 0, busyPct: 50, seconds: 60 },
      busy: false,
      reruns: 0,
      discarded: [],
      values: {
        sfs: both("sfs", 100, 100, sfsTransfers),
        "round-robin": both("round-robin", 80, 100 - index * 10, 2),
        locality: both("locality", 50, 100, 0.5)
      }
    }))

  it("gives per-policy medians, ratios over SFS from the rounds, and plots that keep the contract", async () => {
    const report = fig10Report(true, rounds(1), settings)
    expect(report.ratios.fig10TpccThroughputRoundRobinOverSfs).toMatchObject({ median: 0.8, repeats: 2 })
    expect(report.ratios.fig10TpccThroughputLocalityOverSfs).toMatchObject({ median: 0.5 })
    expect(report.ratios.fig10EthereumThroughputRoundRobinOverSfs).toMatchObject({ min: 0.9, max: 1 })
    expect(report.ratios.fig10TpccTransfersRoundRobinOverSfs).toMatchObject({ median: 2 })
    expect(report.ratios.fig10TpccP90LocalityOverSfs).toMatchObject({ median: 1 })
    expect(report.ratios.fig10TpccSaturatedThroughputLocalityOverSfs).toMatchObject({ median: 0.5 })
    expect(report.ratios.fig10EthereumSaturatedTransfersRoundRobinOverSfs).toMatchObject({ median: 2 })
    // Saturated: throughput and transfers only (a closed loop's latency is its queue).
    expect(report.ratios.fig10TpccSaturatedP90LocalityOverSfs).toBeUndefined()
    const tpcc = report.metrics.fig10ByWorkload.tpcc!.policies
    expect(tpcc.locality!.offered!.throughputTps).toMatchObject({ median: 50, samples: 2 })
    expect(tpcc.locality!.saturated!.throughputTps).toMatchObject({ median: 75, samples: 2 })
    expect(tpcc["round-robin"]!.offered!.perPhase[1]!.transfersPerTx.median).toBe(2)
    expect(tpcc.sfs!.offered!.perPhase[0]!.busiestWorkerShare.median).toBeCloseTo(1 / 3, 2)
    const result = {
      suite: "t",
      quick: true,
      command: "t",
      machine: {},
      metrics: report.metrics,
      ratios: report.ratios
    }
    expect(checkResult(result)).toEqual([])
    for (const curve of Object.values(report.curves)) {
      expect(await renderSvg(vegaLiteSpec(curve))).toContain("</svg>")
    }
    const throughput = report.curves["fig10-tpcc-throughput"]!
    expect(new Set(throughput.points.map((q) => q.series))).toEqual(
      new Set(["sfs", "round-robin", "locality", "hotspot moves (2 s)"])
    )
    const saturated = report.curves["fig10-tpcc-saturated-throughput"]!
    expect(saturated.points.find((q) => q.series === "locality" && q.x === 2)).toMatchObject({ y: 75 })
  })

  it("a run with no SFS transfers leaves that ratio out with a note instead of dividing by zero", () => {
    const report = fig10Report(true, rounds(0), settings)
    expect(report.ratios.fig10TpccTransfersLocalityOverSfs).toBeUndefined()
    expect(report.ratios.fig10TpccThroughputLocalityOverSfs).toBeDefined()
    expect(report.metrics.fig10RatioNotes?.join()).toMatch(/fig10TpccTransfersLocalityOverSfs/)
  })
})
