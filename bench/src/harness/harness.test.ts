import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Resvg } from "@resvg/resvg-js"
import { afterAll, describe, expect, it } from "vitest"
import { encodeHistogram, histogramOfMs, mergeHistograms, summarize } from "./histogram.js"
import { interleave } from "./interleave.js"
import { type Curve, renderSvg, vegaLiteSpec, writePlot } from "./plot.js"
import { ratioOf, simRatioOf } from "./ratio.js"
import { BenchContractError, type BenchResult, checkResult, resultsDir, writeResult } from "./result.js"
import { readResults, summaryMarkdown } from "./summary.js"

const calm = { busyLoadavg: Number.POSITIVE_INFINITY, busyStealPct: 100 }
const quiet = { log: () => {} }

const twoRounds = async () =>
  interleave({ quick: true, rounds: 2, policy: calm, ...quiet }, { a: async () => 10, b: async () => 4 })

const result = async (ratios: BenchResult["ratios"], extra: Partial<BenchResult> = {}): Promise<BenchResult> => ({
  suite: "t",
  quick: true,
  command: "test",
  machine: {},
  metrics: {},
  ratios,
  ...extra
})

const spec = { numerator: "a (/s)", denominator: "b (/s)", conditions: { inFlight: 1 } }

/** A PNG of the SVG, and whether anything but the background was drawn. */
const png = (svg: string) => {
  const image = new Resvg(svg, { background: "white", font: { loadSystemFonts: true } }).render()
  const pixels = image.pixels
  let drawn = 0
  for (let i = 0; i < pixels.length; i += 4)
    if (pixels[i]! < 200 || pixels[i + 1]! < 200 || pixels[i + 2]! < 200) drawn++
  return { width: image.width, height: image.height, bytes: image.asPng().length, drawn }
}

const tmp = mkdtempSync(join(tmpdir(), "reef-harness-"))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe("interleave", () => {
  it("runs the contenders in turn, A B A B, and records the machine around each round", async () => {
    const order: Array<string> = []
    const rounds = await interleave(
      { quick: false, rounds: 3, policy: calm, ...quiet },
      { a: async () => order.push("a"), b: async () => order.push("b") }
    )
    expect(order).toEqual(["a", "b", "a", "b", "a", "b"])
    expect(rounds).toHaveLength(3)
    for (const r of rounds) expect(r.machine.seconds).toBeGreaterThanOrEqual(0)
  })

  it("runs a busy round again, a bounded number of times, and records it", async () => {
    let runs = 0
    const rounds = await interleave(
      { quick: true, rounds: 2, maxRerunsPerRound: 2, policy: { busyLoadavg: -1, busyStealPct: 100 }, ...quiet },
      { a: async () => runs++, b: async () => 0 }
    )
    expect(runs).toBe(6)
    expect(rounds.map((r) => [r.reruns, r.busy, r.discarded.length])).toEqual([
      [2, true, 2],
      [2, true, 2]
    ])
  })
})

describe("ratios", () => {
  it("report the median and min–max of the per-round ratio", async () => {
    const rounds = await interleave(
      { quick: false, rounds: 3, policy: calm, ...quiet },
      { a: async (i) => [10, 30, 20][i]!, b: async () => 10 }
    )
    const r = ratioOf(
      spec,
      rounds,
      (v) => v.a,
      (v) => v.b
    )
    expect([r.median, r.min, r.max, r.repeats, r.kind]).toEqual([2, 1, 3, 3, "measured"])
    expect(r.values).toEqual([1, 3, 2])
  })

  it("a result with a bare ratio, a single round, or a misnamed simulated figure is refused", async () => {
    const rounds = await twoRounds()
    const good = ratioOf(
      spec,
      rounds,
      (v) => v.a,
      (v) => v.b
    )
    expect(checkResult(await result({ x: good }))).toEqual([])
    expect(checkResult(await result({ x: 2.5 as never })).join()).toMatch(/bare value/)
    expect(checkResult(await result({ x: good }, { quick: false })).join()).toMatch(/at least 3/)
    const one = ratioOf(
      spec,
      rounds.slice(0, 1),
      (v) => v.a,
      (v) => v.b
    )
    expect(checkResult(await result({ x: one })).join()).toMatch(/at least 2/)
    expect(checkResult(await result({ xSim: good })).join()).toMatch(/simulated/)
    const sim = simRatioOf(spec, [
      { seed: 1, numerator: 2, denominator: 1 },
      { seed: 2, numerator: 3, denominator: 1 }
    ])
    expect(checkResult(await result({}, { simulated: { ratios: { fooSim: sim } } }))).toEqual([])
    expect(checkResult(await result({}, { simulated: { ratios: { foo: sim } } })).join()).toMatch(/says Sim/)
    const { median: _m, ...noMedian } = good
    expect(checkResult(await result({ x: noMedian as never })).join()).toMatch(/median/)
  })

  it("writeResult refuses a ratio without median and spread and writes nothing", async () => {
    const dir = join(tmp, "refused")
    await expect(writeResult(await result({ x: 2 as never }), dir)).rejects.toBeInstanceOf(BenchContractError)
    expect(() => readdirSync(dir)).toThrow()
  })

  it("writeResult writes the result, a plot per curve and SUMMARY.md", async () => {
    const dir = join(tmp, "written")
    const rounds = await twoRounds()
    const curve: Curve = {
      title: "t",
      x: { title: "x (n)" },
      y: { title: "y (/s)" },
      points: [
        { series: "a", x: 1, y: 5, yMin: 4, yMax: 6 },
        { series: "a", x: 2, y: 7 }
      ]
    }
    await writeResult(
      await result(
        {
          aOverB: ratioOf(
            spec,
            rounds,
            (v) => v.a,
            (v) => v.b
          )
        },
        { curves: { c: curve } }
      ),
      dir
    )
    expect(readdirSync(dir).sort()).toEqual(["SUMMARY.md", "t-c.svg", "t-c.vl.json", "t.json"])
    const summary = readFileSync(join(dir, "SUMMARY.md"), "utf8")
    expect(summary).toMatch(/\| aOverB \| 2\.5 \| 2\.5–2\.5 \| 2 \|/)
  })
})

describe("histograms", () => {
  it("percentiles of merged histograms are those of all the samples", () => {
    const a = Array.from({ length: 1000 }, (_, i) => 1 + i * 0.01)
    const b = Array.from({ length: 1000 }, (_, i) => 50 + i)
    const merged = summarize(mergeHistograms([encodeHistogram(histogramOfMs(a)), histogramOfMs(b)]))
    const all = summarize(histogramOfMs([...a, ...b]))
    expect(merged).toEqual(all)
    expect(merged.count).toBe(2000)
    // p99 of the union lies in b's tail, far above the largest of the two p99s' mean
    expect(merged.p99Ms).toBeGreaterThan(1000)
  })
})

describe("plots", () => {
  it("a curve's Vega-Lite spec has one line per series, a legend, units and a band for spreads", async () => {
    const curve: Curve = {
      title: "Set throughput",
      x: { title: "replicas (N)" },
      y: { title: "writes (/s)", scale: "log" },
      points: [
        { series: "reef", x: 3, y: 5000, yMin: 4000, yMax: 6000 },
        { series: "reef", x: 5, y: 3000 },
        { series: "etcd", x: 3, y: 4000 },
        { series: "etcd", x: 5, y: 3500 }
      ]
    }
    const svg = await renderSvg(vegaLiteSpec(curve))
    expect(svg).toContain("Set throughput")
    expect(svg).toContain("writes (/s)")
    expect(svg).toContain("etcd")
    const image = png(svg)
    expect(image.width).toBeGreaterThan(300)
    expect(image.drawn).toBeGreaterThan(500)
    await writePlot(tmp, "p", curve)
  })

  it("series on a second y axis get their own scale, on the right, and the others keep theirs", async () => {
    const curve: Curve = {
      title: "Load and pool",
      x: { title: "time (s)" },
      y: { title: "throughput (tx/s)" },
      y2: { title: "active workers", series: ["pool"], interpolate: "step-after" },
      points: [
        { series: "tps", x: 0, y: 80, yMin: 70, yMax: 90 },
        { series: "tps", x: 1, y: 120 },
        { series: "pool", x: 0, y: 2 },
        { series: "pool", x: 1, y: 3 }
      ]
    }
    const spec = vegaLiteSpec(curve) as { resolve: unknown; layer: Array<Record<string, unknown>> }
    expect(spec.resolve).toEqual({ scale: { y: "independent" } })
    expect(JSON.stringify(spec.layer[1]!.transform)).toContain('"oneOf":["pool"]')
    const svg = await renderSvg(vegaLiteSpec(curve))
    expect(svg).toContain("active workers")
    expect(svg).toContain("throughput (tx/s)")
    expect(png(svg).drawn).toBeGreaterThan(500)
  })

  it("every plot in bench/results renders to a PNG", async () => {
    const specs = readdirSync(resultsDir).filter((f) => f.endsWith(".vl.json"))
    for (const file of specs) {
      const spec = JSON.parse(readFileSync(join(resultsDir, file), "utf8")) as Record<string, unknown>
      const image = png(await renderSvg(spec))
      expect(image.width, file).toBeGreaterThan(300)
      expect(image.drawn, file).toBeGreaterThan(500)
    }
    const svgs = readdirSync(resultsDir).filter((f) => f.endsWith(".svg"))
    const listed = new Set(readResults(resultsDir).flatMap((r) => r.plots ?? []))
    for (const file of svgs) {
      expect(specs, `${file} has its Vega-Lite spec beside it`).toContain(file.replace(/\.svg$/, ".vl.json"))
      expect(listed.has(file), `${file} is a plot of a current result`).toBe(true)
    }
  })
})

describe("bench/results", () => {
  it("every committed result keeps the contract: ratios with median and spread from interleaved rounds", () => {
    const results = readResults(resultsDir)
    expect(results.length).toBeGreaterThan(0)
    for (const r of results) expect(checkResult(r), r.suite).toEqual([])
  })

  it("SUMMARY.md is what the results generate", () => {
    const committed = readFileSync(join(resultsDir, "SUMMARY.md"), "utf8")
    expect(committed).toBe(summaryMarkdown(readResults(resultsDir)))
  })
})
