import { describe, expect, it } from "vitest"
import { checkResult, renderSvg, vegaLiteSpec } from "../harness/index.js"
import { BUCKET_MS, dipAfter, type Fig8Run, smoothed, timelineOf } from "./fig8.js"
import { fig8Report } from "./fig8-report.js"

/** Completions at `perSecond` evenly over [fromS, toS), each with `latencyMs`. */
const steady = (fromS: number, toS: number, perSecond: number, latencyMs = 10) =>
  Array.from({ length: Math.round((toS - fromS) * perSecond) }, (_, i) => ({
    at: fromS * 1000 + (i * 1000) / perSecond,
    latencyMs
  }))

describe("Fig. 8 timeline and dip", () => {
  it("buckets completions per 250 ms with their throughput and p90", () => {
    const timeline = timelineOf([...steady(0, 1, 400, 5), { at: 100, latencyMs: 900 }], 1000)
    expect(timeline.map((p) => p.t)).toEqual([0, 0.25, 0.5, 0.75])
    expect(timeline.map((p) => p.tps)).toEqual([404, 400, 400, 400])
    expect(timeline[1]!.p90Ms).toBe(5)
    expect(BUCKET_MS).toBe(250)
  })

  it("a 2 s gap after the kill is a 2 s dip, and a steady stretch has no noise floor", () => {
    const completions = [...steady(0, 10, 300), ...steady(12, 20, 300)]
    const timeline = timelineOf(completions, 20_000)
    const dip = dipAfter(timeline, 10, 20)
    expect(dip.preFailureTps).toBe(300)
    expect(dip.dipSeconds).toBe(2)
    expect(dip.preFailureBelowHalfSeconds).toBe(0)
  })

  it("a gap shorter than the moving mean's half is no dip, and a slow stretch counts only while below half", () => {
    const short = timelineOf([...steady(0, 10, 300), ...steady(10.25, 20, 300)], 20_000)
    expect(dipAfter(short, 10, 20).dipSeconds).toBe(0)
    // At 40% of the level for 3 s: below half for most of it (the moving mean blurs each edge by two buckets).
    const slow = timelineOf([...steady(0, 10, 300), ...steady(10, 13, 120), ...steady(13, 20, 300)], 20_000)
    expect(dipAfter(slow, 10, 20).dipSeconds).toBe(2)
  })

  it("the 1 s moving mean keeps the level of a steady series", () => {
    const timeline = timelineOf(steady(0, 5, 200), 5_000)
    expect(new Set(smoothed(timeline).map((p) => p.tps))).toEqual(new Set([200]))
  })
})

describe("Fig. 8 report", () => {
  const run = (epochMs: number, dip: number, restartMs: number): Fig8Run => ({
    epochMs,
    rateTps: 300,
    timeline: timelineOf([...steady(0, 10, 300, 20), ...steady(10 + dip, 30, 300, 40)], 30_000),
    workerKills: [
      {
        worker: "w2",
        atS: 10,
        preFailureTps: 300,
        dipSeconds: dip,
        preFailureBelowHalfSeconds: 0,
        recovered: true,
        steadyBefore: true,
        killToRecoveryMs: 900,
        replayed: 400
      }
    ],
    coordinatorKills: [
      { atS: 20, restartToServingMs: restartMs, killToReceiptMs: 5000, replayMs: 300, replayedBlocks: 3 }
    ],
    recoveries: 2,
    unprovokedRecoveries: 0,
    coordinatorCpuUsPerTx: 500,
    transactions: 8000
  })
  const machine = { loadavgBefore: 1, loadavgAfter: 1, stealPct: 0, busyPct: 50, seconds: 60 }
  const rounds = (restarts: ReadonlyArray<number>) =>
    restarts.map((restartMs, index) => ({
      index,
      machine,
      busy: false,
      reruns: 0,
      discarded: [],
      values: { epoch1000: run(1000, 2, 4000), epoch8000: run(8000, 3, restartMs) }
    }))

  it("gives the headline at the default epoch, the trade-off's ratios and plots that keep the contract", async () => {
    const report = fig8Report(true, rounds([6000, 8000]))
    expect(report.metrics.recoveryDipSeconds).toMatchObject({ median: 2, min: 2, max: 2, epochMs: 1000 })
    expect(report.metrics.coordinatorRestartToServingMs).toMatchObject({ median: 4000 })
    expect(report.ratios.fig8RecoveryDipEpoch8000OverEpoch1000Ms).toMatchObject({ median: 1.5, repeats: 2 })
    expect(report.ratios.fig8CoordinatorRestartToServingEpoch8000OverEpoch1000Ms).toMatchObject({ median: 1.75 })
    const result = {
      suite: "t",
      quick: true,
      command: "test",
      machine: {},
      metrics: report.metrics,
      ratios: report.ratios
    }
    expect(checkResult(result)).toEqual([])
    for (const curve of Object.values(report.curves)) {
      const svg = await renderSvg(vegaLiteSpec(curve))
      expect(svg).toContain("</svg>")
    }
    expect(report.curves["fig8-throughput"]!.points.some((p) => p.series.startsWith("kill -9 w2"))).toBe(true)
  })

  it("a restart that never served is counted and leaves its ratio out rather than writing a NaN", () => {
    const report = fig8Report(true, rounds([Number.NaN, 8000]))
    expect(report.ratios.fig8CoordinatorRestartToServingEpoch8000OverEpoch1000Ms).toBeUndefined()
    expect(report.metrics.fig8RatioNotes?.join()).toMatch(/fig8CoordinatorRestartToServing/)
    expect(report.metrics.fig8ByEpochMs["8000"]!.coordinatorKillsNotServingByDeadline).toBe(1)
    expect(
      checkResult({ suite: "t", quick: true, command: "t", machine: {}, metrics: {}, ratios: report.ratios })
    ).toEqual([])
  })
})
