/**
 * Plots are Vega-Lite specs rendered to SVG headless (vega + vega-lite, no browser). Each plot is written as
 * `<name>.svg` beside its spec `<name>.vl.json`, whose inline data is the curve itself, so a reader can
 * re-plot it. One line per series with a legend, a title, units in the axis titles, nice rounded ticks,
 * and a min–max band where a point was repeated.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as vega from "vega"
import * as vegaLite from "vega-lite"

export interface Axis {
  /** With its unit: "throughput (ops/s)". */
  readonly title: string
  readonly scale?: "linear" | "log"
  /** d3-format for tick labels (default ",.4~r": 12,000 and 0.25 and 350, never raw floats or exponents). */
  readonly format?: string
  /** Start the axis at zero (default: true for a linear y). */
  readonly zero?: boolean
  /** Names for x = 0, 1, 2, …: a categorical axis (configurations) drawn on integer positions. */
  readonly labels?: ReadonlyArray<string>
  /** Ticks at exactly these values (a discrete x such as group sizes). */
  readonly ticks?: ReadonlyArray<number>
}

export interface CurvePoint {
  readonly series: string
  readonly x: number
  readonly y: number
  /** Spread of the repeats behind `y`, when it was repeated. */
  readonly yMin?: number
  readonly yMax?: number
}

/** A curve reported whole: every point of every series. */
export interface Curve {
  readonly title: string
  readonly x: Axis
  readonly y: Axis
  readonly points: ReadonlyArray<CurvePoint>
  /** Line interpolation: "linear" (default) or "step-after" (a CDF). */
  readonly interpolate?: "linear" | "step-after"
  /** Where on the curve a headline ratio is taken, if one is. */
  readonly headline?: string
  /** Draw the points (default true; off for dense time series and CDFs). */
  readonly pointMarks?: boolean
  /** A second y axis, on the right, for these series (a pool size over a throughput, say). */
  readonly y2?: Axis & {
    readonly series: ReadonlyArray<string>
    readonly interpolate?: "linear" | "step-after"
  }
}

const axisOf = (a: Axis, isY: boolean) => ({
  title: a.title,
  axis:
    a.labels === undefined
      ? {
          format: a.format ?? ",.4~r",
          labelOverlap: true,
          grid: true,
          ...(a.ticks === undefined ? {} : { values: [...a.ticks] })
        }
      : {
          values: a.labels.map((_, i) => i),
          labelExpr: `${JSON.stringify(a.labels)}[datum.value]`,
          labelAngle: 0,
          grid: true
        },
  scale: {
    type: a.scale ?? "linear",
    ...((a.scale ?? "linear") === "linear" ? { zero: a.zero ?? isY } : {}),
    // A log x keeps the data's own range (nice would widen 1..16 to 1..100); a log y is niced to decades.
    nice: a.labels === undefined && a.ticks === undefined && ((a.scale ?? "linear") === "linear" || isY),
    ...(a.labels === undefined ? {} : { domain: [-0.5, a.labels.length - 0.5] })
  }
})

const withAxis = (a: ReturnType<typeof axisOf>, more: Record<string, unknown>) => ({
  ...a,
  axis: { ...a.axis, ...more }
})

/** A few small distinct whole-number x values (group sizes, worker counts) get a tick each and no others. */
const discreteTicks = (curve: Curve): ReadonlyArray<number> | undefined => {
  const xs = [...new Set(curve.points.map((p) => p.x))].sort((a, b) => a - b)
  return xs.length <= 12 && xs.every(Number.isInteger) && (xs.at(-1) ?? 0) <= 128 ? xs : undefined
}

export const vegaLiteSpec = (curve: Curve): Record<string, unknown> => {
  const ticks = curve.x.ticks ?? (curve.x.labels === undefined ? discreteTicks(curve) : undefined)
  const x = {
    field: "x",
    type: "quantitative",
    ...axisOf({ ...curve.x, ...(ticks === undefined ? {} : { ticks }) }, false)
  }
  const y = { field: "y", type: "quantitative", ...axisOf(curve.y, true) }
  const color = { field: "series", type: "nominal", title: null, legend: { orient: "right", labelLimit: 260 } }
  const onY2 = curve.y2?.series ?? []
  const layers: Array<Record<string, unknown>> = [
    {
      ...(onY2.length === 0 ? {} : { transform: [{ filter: { not: { field: "series", oneOf: [...onY2] } } }] }),
      mark: { type: "line", interpolate: curve.interpolate ?? "linear", point: curve.pointMarks ?? true },
      encoding: { x, y, color }
    }
  ]
  if (curve.points.some((p) => p.yMin !== undefined && p.yMax !== undefined)) {
    layers.push({
      transform: [{ filter: "isValid(datum.yMin) && isValid(datum.yMax)" }],
      mark: { type: "rule", opacity: 0.6 },
      encoding: {
        x: { field: "x", type: "quantitative" },
        y: { field: "yMin", type: "quantitative" },
        y2: { field: "yMax" },
        color
      }
    })
  }
  // The second axis is its own layer with its own y scale; the first axis's line and band share theirs.
  const y2 =
    curve.y2 === undefined
      ? undefined
      : {
          transform: [{ filter: { field: "series", oneOf: [...onY2] } }],
          mark: { type: "line", interpolate: curve.y2.interpolate ?? "linear", point: false, strokeDash: [6, 3] },
          encoding: {
            x,
            y: {
              field: "y",
              type: "quantitative",
              ...withAxis(axisOf(curve.y2, true), { orient: "right", grid: false })
            },
            color
          }
        }
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: curve.title, ...(curve.headline === undefined ? {} : { subtitle: `headline: ${curve.headline}` }) },
    width: 560,
    height: 320,
    background: "white",
    data: { values: curve.points.map((p) => ({ ...p })) },
    ...(y2 === undefined
      ? { layer: layers }
      : { layer: [{ layer: layers }, y2], resolve: { scale: { y: "independent" } } }),
    config: { font: "DejaVu Sans, Arial, sans-serif" }
  }
}

/** The SVG of a Vega-Lite spec, rendered headless. */
export const renderSvg = async (spec: Record<string, unknown>): Promise<string> => {
  const compiled = vegaLite.compile(spec as never).spec
  const view = new vega.View(vega.parse(compiled), { renderer: "none" })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

/** Writes `<dir>/<name>.vl.json` and `<dir>/<name>.svg` (from the curve: re-plotting a stored result gives the same); returns the spec. */
export const writePlot = async (dir: string, name: string, curve: Curve): Promise<Record<string, unknown>> => {
  const spec = vegaLiteSpec(curve)
  writeFileSync(join(dir, `${name}.vl.json`), `${JSON.stringify(spec, null, 2)}\n`)
  writeFileSync(join(dir, `${name}.svg`), await renderSvg(spec))
  return spec
}
