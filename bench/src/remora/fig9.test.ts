import type { RemoraClient } from "@reef/coordinator"
import { Receipt, Transaction } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { checkResult, renderSvg, vegaLiteSpec } from "../harness/index.js"
import { timelineOf } from "./fig8.js"
import {
  type Completion,
  dueBy,
  eventsFromLog,
  type Fig9Profile,
  type Fig9Run,
  longestGap,
  rateAt,
  roundMetrics,
  type ScalingEvents,
  scaleOutSeconds,
  transitionWindows
} from "./fig9.js"
import { fig9Report } from "./fig9-report.js"
import { runLoad } from "./process-cluster.js"

const profile: Fig9Profile = { baseTps: 80, spikeTps: 120, beforeS: 10, warmupS: 2, spikeS: 10, afterS: 10 }

/** Completions at `perSecond` evenly over [fromS, toS), each with `latencyMs`, by `worker`. */
const steady = (fromS: number, toS: number, perSecond: number, latencyMs = 400, worker = "w1"): Array<Completion> =>
  Array.from({ length: Math.round((toS - fromS) * perSecond) }, (_, i) => ({
    at: fromS * 1000 + (i * 1000) / perSecond,
    latencyMs,
    worker
  }))

const noEvents: ScalingEvents = {
  initialActive: ["w1", "w2", "w3"],
  spare: undefined,
  scaleOutDecisionS: undefined,
  newWorkerServingS: undefined,
  retireDecisionS: undefined,
  retiredWorker: undefined,
  retiredS: undefined,
  retiredExitS: undefined,
  retiredExitCode: undefined
}

const elasticEvents: ScalingEvents = {
  initialActive: ["w1", "w2"],
  spare: "w3",
  scaleOutDecisionS: 11,
  newWorkerServingS: 11.5,
  retireDecisionS: 21,
  retiredWorker: "w1",
  retiredS: 22,
  retiredExitS: 22.1,
  retiredExitCode: 0
}

const runOf = (mode: "elastic" | "fixed", completions: Array<Completion>, events: ScalingEvents): Fig9Run => ({
  mode,
  profile,
  completions,
  timeline: timelineOf(completions, 30_000, 250),
  latencyTimeline: timelineOf(completions, 30_000, 1000),
  pool: [
    { t: 0, active: 2, retiring: 0, spare: 1, meanLoadUs: 5e6 },
    { t: 12, active: 3, retiring: 0, spare: 0, meanLoadUs: 5e6 },
    { t: 21.5, active: 2, retiring: 1, spare: 0, meanLoadUs: 3e6 }
  ],
  events,
  scaleOuts: mode === "elastic" ? 1 : 0,
  scaleIns: mode === "elastic" ? 1 : 0,
  decisions: [],
  recoveries: 0,
  submitted: completions.length,
  answered: completions.length,
  byWorker: { w1: completions.length },
  stateMatchesReference: true
})

describe("Fig. 9 load profile", () => {
  it("rises by half for the spike and falls back; the transactions due are the rate's integral", () => {
    expect([0, 9.9, 10, 19.9, 20, 29.9, 30].map((t) => rateAt(profile, t))).toEqual([80, 80, 120, 120, 80, 80, 0])
    expect(dueBy(profile, 0)).toBe(0)
    expect(dueBy(profile, 10_000)).toBe(800)
    expect(dueBy(profile, 15_000)).toBe(1400)
    expect(dueBy(profile, 30_000)).toBe(800 + 1200 + 800)
    expect(dueBy(profile, 99_000)).toBe(2800)
  })
})

describe("Fig. 9 open loop at a changing rate", () => {
  it("submits every transaction the profile makes due, none before it is due, and hands back each receipt", async () => {
    // A client that answers each submission at once with a receipt from "w1".
    const client = {
      submitCallback: (_tx: Transaction, done: (o: unknown) => void) =>
        setImmediate(() => done({ _tag: "Executed", txId: "t", receipt: Receipt.fromPartial({ worker: "w1" }) }))
    } as unknown as RemoraClient
    const short: Fig9Profile = { baseTps: 200, spikeTps: 300, beforeS: 0.1, warmupS: 0, spikeS: 0.1, afterS: 0.1 }
    const total = dueBy(short, 300)
    const submittedAt: Array<number> = []
    const workers: Array<string> = []
    const load = runLoad({
      client,
      pace: { dueBy: (ms) => dueBy(short, ms) },
      total,
      next: (n) => Transaction.fromPartial({ body: Buffer.from([n]) }),
      onSubmit: (_n, atMs) => submittedAt.push(atMs),
      onReceipt: (_n, _atMs, _latencyMs, receipt) => workers.push(receipt.worker)
    })
    expect(await load.done(10_000)).toEqual({ answered: total, submitted: total })
    expect(total).toBe(70)
    // The n-th transaction (0-based) went out once n + 1 were due.
    expect(submittedAt.filter((atMs, n) => dueBy(short, atMs) < n + 1)).toEqual([])
    expect(workers).toEqual(Array(total).fill("w1"))
  })
})

describe("Fig. 9 metrics", () => {
  it("the longest gap counts from the window's start, between completions, and up to its end", () => {
    const completions = [...steady(0, 5, 100), ...steady(6.5, 9, 100)]
    expect(longestGap(completions, 0, 10)).toMatchObject({ atS: expect.closeTo(4.99, 2) })
    expect(longestGap(completions, 0, 10).seconds).toBeCloseTo(1.51, 2)
    expect(longestGap(completions, 0, 12).seconds).toBeCloseTo(3.01, 2)
    expect(longestGap([], 2, 5)).toEqual({ seconds: 3, atS: 2 })
  })

  it("transitions run from the spike to after the spare served, and from the retire decision to after it retired", () => {
    expect(transitionWindows(profile, elasticEvents, 3)).toEqual([
      { name: "scale-out", fromS: 10, toS: 14.5 },
      { name: "scale-in", fromS: 21, toS: 25 }
    ])
    expect(transitionWindows(profile, noEvents)).toEqual([])
    // Retired per the process exit when the log line is missing.
    expect(transitionWindows(profile, { ...elasticEvents, retiredS: undefined }, 1)[1]).toEqual({
      name: "scale-in",
      fromS: 21,
      toS: 23.1
    })
    expect(scaleOutSeconds(profile, elasticEvents)).toBe(1.5)
    // A spare that served before the spike (a scale-out the spike did not cause) gives no scale-out time.
    expect(scaleOutSeconds(profile, { ...elasticEvents, newWorkerServingS: 8 })).toBeNaN()
    expect(transitionWindows(profile, { ...elasticEvents, newWorkerServingS: 8 }).map((w) => w.name)).toEqual([
      "scale-in"
    ])
  })

  it("p90 inflation is the transitions' p90 over the steady p90, and the stall is beyond the fixed pool's gap", () => {
    // Elastic: 400 ms steady, 800 ms inside the scale-out window, a 1 s pause at 16 s; fixed: flat, a 0.3 s pause.
    const elastic = [
      ...steady(0, 10, 80),
      ...steady(10, 14.5, 120, 800),
      ...steady(14.5, 16, 120),
      ...steady(17, 20, 120),
      ...steady(20, 30, 80)
    ]
    const fixed = [...steady(0, 10, 80), ...steady(10, 20, 120), ...steady(20, 25, 80), ...steady(25.3, 30, 80)]
    const m = roundMetrics(runOf("elastic", elastic, elasticEvents), runOf("fixed", fixed, noEvents))
    expect(m.steadyP90Ms).toBe(400)
    expect(m.transitionP90Ms).toBe(800)
    expect(m.p90Inflation).toBe(2)
    expect(m.fixedP90Inflation).toBe(1)
    expect(m.scaleOutSeconds).toBe(1.5)
    expect(m.scaleInSeconds).toBe(2)
    expect(m.transitions.map((w) => [w.name, w.p90Inflation])).toEqual([
      ["scale-out", 2],
      ["scale-in", 1]
    ])
    expect(m.longestGapSeconds).toBeCloseTo(1.008, 2)
    expect(m.longestGapAtS).toBeCloseTo(15.99, 1)
    expect(m.fixedLongestGapSeconds).toBeCloseTo(0.3125, 2)
    expect(m.stallSeconds).toBeCloseTo(1.008 - 0.3125, 2)
    expect(m.throughput.before).toEqual({ elastic: 80, fixed: 80, offered: 80 })
    expect(m.throughput.after.offered).toBe(80)
    // A fixed pool that paused longer than the elastic one: no stall is charged to the autoscaler.
    const calm = roundMetrics(runOf("elastic", fixed, elasticEvents), runOf("fixed", elastic, noEvents))
    expect(calm.stallSeconds).toBe(0)
  })

  it("reads the autoscaler's decisions and the retirement from the coordinator's log lines", () => {
    const log = [
      {
        atS: -1,
        line: "WARN  autoscaler: scale-out (below-min, mean load 0 µs over 0 workers) but no spare worker is running"
      },
      {
        atS: 11.2,
        line: "INFO  autoscaler: scale-out (load-high, mean load 8850014 µs over 2 workers): w3 (incarnation a) joins the pool"
      },
      { atS: 21, line: "INFO  autoscaler: retire w1 (load-low, mean load 3300000 µs over 3 workers)" },
      { atS: 21, line: "INFO  autoscaler: w1 retiring (load-low): no new work; it drains, then an epoch ends" },
      { atS: 21.6, line: "INFO  autoscaler: 1971 objects of w1 reclaimed at epoch 35" },
      { atS: 22, line: "INFO  autoscaler: w1 (incarnation b) retired (load-low; 1971 objects reclaimed)" }
    ]
    expect(eventsFromLog(log)).toEqual({
      scaleOutDecisionS: 11.2,
      retireDecisionS: 21,
      retiredWorker: "w1",
      retiredS: 22
    })
    expect(eventsFromLog(log.slice(0, 1))).toEqual({
      scaleOutDecisionS: undefined,
      retireDecisionS: undefined,
      retiredWorker: undefined,
      retiredS: undefined
    })
  })
})

describe("Fig. 9 report", () => {
  const machine = { loadavgBefore: 1, loadavgAfter: 1, stealPct: 0, busyPct: 50, seconds: 60 }
  const elastic = [...steady(0, 10, 80), ...steady(10, 20, 120, 500), ...steady(20, 30, 80)]
  const fixed = [...steady(0, 10, 80), ...steady(10, 20, 120), ...steady(20, 30, 80)]
  const rounds = [0, 1].map((index) => ({
    index,
    machine,
    busy: false,
    reruns: 0,
    discarded: [],
    values: { elastic: runOf("elastic", elastic, elasticEvents), fixed: runOf("fixed", fixed, noEvents) }
  }))

  it("gives the three metrics with their spreads, a ratio over the fixed pool, and plots with the pool on a second axis", async () => {
    const report = fig9Report(true, rounds)
    expect(report.metrics.elasticScaleOutSeconds).toMatchObject({ median: 1.5, min: 1.5, max: 1.5, samples: 2 })
    expect(report.metrics.elasticP90InflationDuringScaling).toMatchObject({ median: 1.25, goal: "<= 1.5" })
    expect(report.metrics.elasticP90InflationByTransition.scaleOut).toMatchObject({ median: 1.25 })
    expect(report.metrics.elasticScaleInSeconds).toMatchObject({ median: 2 })
    expect(report.metrics.runsWithStateEqualToReference).toBe("4/4")
    expect(report.metrics.stallSeconds).toMatchObject({ median: 0, goal: 0 })
    expect(report.ratios.fig9TransitionP90ElasticOverFixedPool).toMatchObject({ median: 1.25, repeats: 2 })
    expect(
      checkResult({
        suite: "t",
        quick: true,
        command: "t",
        machine: {},
        metrics: report.metrics,
        ratios: report.ratios
      })
    ).toEqual([])
    for (const curve of Object.values(report.curves)) {
      expect(curve.y2?.series.length).toBe(1)
      expect(curve.points.some((p) => curve.y2!.series.includes(p.series) && p.y === 3)).toBe(true)
      expect(await renderSvg(vegaLiteSpec(curve))).toContain("active workers")
    }
  })

  it("a round without a scale-out leaves the ratio out with a note and counts no sample", () => {
    const none = rounds.map((r, i) =>
      i === 0 ? { ...r, values: { ...r.values, elastic: runOf("elastic", elastic, { ...noEvents, spare: "w3" }) } } : r
    )
    const report = fig9Report(true, none)
    expect(report.ratios.fig9TransitionP90ElasticOverFixedPool).toBeUndefined()
    expect(report.metrics.fig9RatioNotes?.join()).toMatch(/no transition/)
    expect(report.metrics.elasticScaleOutSeconds).toMatchObject({ samples: 1, values: [null, 1.5] })
  })
})
