/**
 * The benchmark harness every suite uses: interleaved rounds with the machine recorded around each
 * (interleave.ts, machine.ts), ratios as median and min–max of declared numerator and denominator (ratio.ts),
 * latencies in mergeable hdr histograms (histogram.ts), curves plotted with Vega-Lite (plot.ts), and the
 * checked result plus SUMMARY.md (result.ts, summary.ts). How to use it: /bench/HARNESS.md.
 */
export * from "./histogram.js"
export * from "./interleave.js"
export * from "./machine.js"
export * from "./plot.js"
export * from "./ratio.js"
export * from "./result.js"
export type { SectionPart } from "./section.js"
export { type Spread, sig, spreadOf } from "./stats.js"
export { readResults, summaryMarkdown, writeSummary } from "./summary.js"
