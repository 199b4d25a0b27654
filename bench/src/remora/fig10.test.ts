import { describe, expect, it } from "vitest"
import { checkResult, renderSvg, vegaLiteSpec } from "../harness/index.js"
import { timelineOf } from "./fig8.js"
import { type Fig10Completion, type Fig10Run, fig10Settings, movedSummary, phaseStats } from "./fig10.js"
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
    const [p0, p1, p2] = phaseStats(completions, 3, 2)
    expect(p0).toMatchObject({ tps: 100, p50Ms: 5, p90Ms: 5, leaseTransfers: 200, transfersPerTx: 1 })
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
})

describe("Fig. 10 report", () => {
  const settings = { ...fig10Settings(true), phases: 2, phaseSeconds: 2 }
  const run = (policy: string, workload: "tpcc" | "ethereum", tps: number, transfers: number): Fig10Run => {
    const completions = [
      ...steady(0, 2, tps, 0, { transfers, workers: ["w1", "w2", "w3"] }),
      ...steady(2, 4, tps, 1, { latencyMs: 40, transfers, workers: ["w1", "w2", "w3"] })
    ]
    const phases = phaseStats(completions, 2, 2)
    return {
      policy: policy as Fig10Run["policy"],
      workload,
      rateTps: 150,
      phaseSeconds: 2,
      phases,
      timeline: timelineOf(completions, 4000),
      ...movedSummary(completions, phases),
      submitted: completions.length,
      answered: completions.length,
      refused: 0,
      recoveries: 0
    }
  }
  const rounds = (sfsTransfers: number) =>
    [0, 1].map((index) => ({
      index,
      machine: { loadavgBefore: 1, loadavgAfter: 1, stealPct: 0, busyPct: 50, seconds: 60 },
      busy: false,
      reruns: 0,
      discarded: [],
      values: {
        sfs: { tpcc: run("sfs", "tpcc", 100, sfsTransfers), ethereum: run("sfs", "ethereum", 100, sfsTransfers) },
        "round-robin": {
          tpcc: run("round-robin", "tpcc", 80, 2),
          ethereum: run("round-robin", "ethereum", 100 - index * 10, 2)
        },
        locality: { tpcc: run("locality", "tpcc", 50, 0.5), ethereum: run("locality", "ethereum", 100, 0.5) }
      }
    }))

  it("gives per-policy medians, ratios over SFS from the rounds, and plots that keep the contract", async () => {
    const report = fig10Report(true, rounds(1), settings)
    expect(report.ratios.fig10TpccThroughputRoundRobinOverSfs).toMatchObject({ median: 0.8, repeats: 2 })
    expect(report.ratios.fig10TpccThroughputLocalityOverSfs).toMatchObject({ median: 0.5 })
    expect(report.ratios.fig10EthereumThroughputRoundRobinOverSfs).toMatchObject({ min: 0.9, max: 1 })
    expect(report.ratios.fig10TpccTransfersRoundRobinOverSfs).toMatchObject({ median: 2 })
    expect(report.ratios.fig10TpccP90LocalityOverSfs).toMatchObject({ median: 1 })
    const tpcc = report.metrics.fig10ByWorkload.tpcc!.policies
    expect(tpcc.locality!.throughputTps).toMatchObject({ median: 50, samples: 2 })
    expect(tpcc["round-robin"]!.perPhase[1]!.transfersPerTx.median).toBe(2)
    expect(tpcc.sfs!.perPhase[0]!.busiestWorkerShare.median).toBeCloseTo(1 / 3, 2)
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
  })

  it("a run with no SFS transfers leaves that ratio out with a note instead of dividing by zero", () => {
    const report = fig10Report(true, rounds(0), settings)
    expect(report.ratios.fig10TpccTransfersLocalityOverSfs).toBeUndefined()
    expect(report.ratios.fig10TpccThroughputLocalityOverSfs).toBeDefined()
    expect(report.metrics.fig10RatioNotes?.join()).toMatch(/fig10TpccTransfersLocalityOverSfs/)
  })
})
