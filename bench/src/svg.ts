/**
 * A dependency-free SVG line chart: throughput (y) against group size N (x), one line per system, so a
 * benchmark's JSON has a picture next to it.
 */
export interface Series {
  readonly name: string
  readonly points: ReadonlyArray<readonly [number, number]>
  /** Dashed horizontal reference (e.g. an unreplicated server) instead of a line through points. */
  readonly reference?: boolean
}

const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

export const lineChart = (options: {
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  readonly series: ReadonlyArray<Series>
  readonly logY?: boolean
}): string => {
  const width = 760
  const height = 440
  const margin = { left: 80, right: 200, top: 40, bottom: 50 }
  const plotW = width - margin.left - margin.right
  const plotH = height - margin.top - margin.bottom
  const xs = options.series.flatMap((s) => s.points.map((p) => p[0]))
  const ys = options.series.flatMap((s) => s.points.map((p) => p[1])).filter((y) => y > 0)
  const xMin = Math.min(...xs)
  const xMax = Math.max(...xs)
  const ty = (y: number) => (options.logY ? Math.log10(Math.max(y, 1e-9)) : y)
  const yMin = options.logY ? Math.floor(ty(Math.min(...ys))) : 0
  const yMax = options.logY ? Math.ceil(ty(Math.max(...ys))) : Math.max(...ys) * 1.1
  const px = (x: number) => margin.left + (xMax === xMin ? plotW / 2 : ((x - xMin) / (xMax - xMin)) * plotW)
  const py = (y: number) => margin.top + plotH - ((ty(y) - yMin) / (yMax - yMin || 1)) * plotH
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(options.title)}</text>`,
    `<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="black"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="black"/>`,
    `<text x="${margin.left + plotW / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`,
    `<text x="18" y="${margin.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${margin.top + plotH / 2})">${escapeXml(options.yLabel)}</text>`
  ]
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) {
    parts.push(`<text x="${px(x)}" y="${margin.top + plotH + 18}" text-anchor="middle">${x}</text>`)
  }
  const ticks = options.logY
    ? Array.from({ length: yMax - yMin + 1 }, (_, i) => 10 ** (yMin + i))
    : Array.from({ length: 6 }, (_, i) => (yMax / 5) * i)
  for (const t of ticks) {
    const y = py(t)
    parts.push(`<line x1="${margin.left - 4}" y1="${y}" x2="${margin.left + plotW}" y2="${y}" stroke="#ddd"/>`)
    parts.push(
      `<text x="${margin.left - 8}" y="${y + 4}" text-anchor="end">${Math.round(t).toLocaleString("en")}</text>`
    )
  }
  options.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!
    if (s.reference) {
      const y = py(s.points[0]?.[1] ?? 0)
      parts.push(
        `<line x1="${margin.left}" y1="${y}" x2="${margin.left + plotW}" y2="${y}" stroke="${color}" stroke-dasharray="6 4" stroke-width="2"/>`
      )
    } else {
      const path = s.points
        .map((p, j) => `${j === 0 ? "M" : "L"}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`)
        .join(" ")
      parts.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>`)
      for (const p of s.points) parts.push(`<circle cx="${px(p[0])}" cy="${py(p[1])}" r="3.5" fill="${color}"/>`)
    }
    const ly = margin.top + 10 + i * 20
    parts.push(
      `<line x1="${width - margin.right + 15}" y1="${ly}" x2="${width - margin.right + 40}" y2="${ly}" stroke="${color}" stroke-width="2"${s.reference ? ' stroke-dasharray="6 4"' : ""}/>`
    )
    parts.push(`<text x="${width - margin.right + 46}" y="${ly + 4}">${escapeXml(s.name)}</text>`)
  })
  parts.push("</svg>")
  return parts.join("\n")
}

/**
 * A dependency-free SVG of empirical CDFs: for each series, the share of samples (y, 0..1) at or below x,
 * with x on a log scale (speedups and slowdowns span orders of magnitude). A dashed vertical line marks x = 1.
 */
export const cdfChart = (options: {
  readonly title: string
  readonly xLabel: string
  readonly series: ReadonlyArray<{ readonly name: string; readonly samples: ReadonlyArray<number> }>
}): string => {
  const width = 760
  const height = 440
  const margin = { left: 70, right: 220, top: 40, bottom: 50 }
  const plotW = width - margin.left - margin.right
  const plotH = height - margin.top - margin.bottom
  const all = options.series.flatMap((s) => s.samples).filter((x) => x > 0 && Number.isFinite(x))
  const lo = Math.floor(Math.log10(Math.min(1, ...all)))
  const hi = Math.ceil(Math.log10(Math.max(1.0001, ...all)))
  const px = (x: number) => margin.left + ((Math.log10(Math.max(x, 10 ** lo)) - lo) / (hi - lo || 1)) * plotW
  const py = (y: number) => margin.top + plotH - y * plotH
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(options.title)}</text>`,
    `<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="black"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="black"/>`,
    `<text x="${margin.left + plotW / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`,
    `<text x="18" y="${margin.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${margin.top + plotH / 2})">share of blocks</text>`
  ]
  for (let e = lo; e <= hi; e++) {
    for (const m of [1, 2, 5]) {
      const x = m * 10 ** e
      if (Math.log10(x) > hi) continue
      parts.push(`<line x1="${px(x)}" y1="${margin.top}" x2="${px(x)}" y2="${margin.top + plotH}" stroke="#eee"/>`)
      if (m === 1) {
        parts.push(
          `<text x="${px(x)}" y="${margin.top + plotH + 18}" text-anchor="middle">${x >= 1 ? x : x.toFixed(-e)}×</text>`
        )
      }
    }
  }
  for (let t = 0; t <= 4; t++) {
    const y = t / 4
    parts.push(`<line x1="${margin.left - 4}" y1="${py(y)}" x2="${margin.left + plotW}" y2="${py(y)}" stroke="#ddd"/>`)
    parts.push(`<text x="${margin.left - 8}" y="${py(y) + 4}" text-anchor="end">${y.toFixed(2)}</text>`)
  }
  parts.push(
    `<line x1="${px(1)}" y1="${margin.top}" x2="${px(1)}" y2="${margin.top + plotH}" stroke="#888" stroke-dasharray="5 4"/>`
  )
  options.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!
    const sorted = [...s.samples].filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
    const points = sorted.map(
      (x, j) => `${j === 0 ? "M" : "L"}${px(x).toFixed(1)},${py((j + 1) / sorted.length).toFixed(1)}`
    )
    parts.push(`<path d="${points.join(" ")}" fill="none" stroke="${color}" stroke-width="2"/>`)
    const ly = margin.top + 10 + i * 20
    parts.push(
      `<line x1="${width - margin.right + 15}" y1="${ly}" x2="${width - margin.right + 40}" y2="${ly}" stroke="${color}" stroke-width="2"/>`
    )
    parts.push(`<text x="${width - margin.right + 46}" y="${ly + 4}">${escapeXml(s.name)}</text>`)
  })
  parts.push("</svg>")
  return parts.join("\n")
}
