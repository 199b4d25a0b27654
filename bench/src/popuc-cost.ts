/**
 * Suite `popuc-cost`: where a POPUC write's CPU and bytes go, per process and per group size, with etcd in the
 * same run (popuc/cost.ts), and the two ways later rounds carry values (`--round-values refs`, the default,
 * and `full`, Alg. 2's whole sets) side by side, interleaved. Writes bench/results/popuc-cost.json and its plots.
 *
 *   pnpm bench popuc-cost [--quick]                       CPU/bytes/messages per committed write, N = 3..9
 *   pnpm bench popuc-cost [--quick] --before-bundle DIR   the same, this build against a saved bundle (the code
 *                                                          before a change: `cp -r services/cli/dist/bundle DIR`
 *                                                          with DIR beside it) instead of `--round-values full`
 *   pnpm bench popuc-cost ... --ns 5,9 [--no-etcd]         only these group sizes (and no etcd)
 *   pnpm bench popuc-cost --profile [--label L] [-- args]  V8 CPU profiles of one replica at N = 5, summarised
 *                                                          into bench/results/profiles/popuc.json under L
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { machineNow, readMachine, writeResult } from "./harness/index.js"
import { type CostPlan, measureCost } from "./popuc/cost.js"
import { costResults, printCostTable } from "./popuc/cost-report.js"
import { profileOnly } from "./popuc/profile.js"

/** The variant the headline ratios are about, and the baseline it is compared with. */
const VARIANTS: CostPlan["variants"] = [
  { name: "reef", args: [] },
  { name: "reefFullValues", args: ["--round-values", "full"] }
]

/** This build against a saved one: its `reef` entry in `dir` (a copy of services/cli/dist/bundle beside it). */
const beforeAfter = (dir: string): CostPlan["variants"] => [
  { name: "reef", args: [] },
  { name: "reefBefore", args: [], entry: resolve(dir, "reef.mjs") }
]

const planFor = (quick: boolean, variants: CostPlan["variants"]): CostPlan =>
  quick
    ? { ns: [3, 5, 9], warmUpMs: 2_000, loadMs: 2_000, concurrency: 128, variants, etcd: true }
    : { ns: [3, 5, 7, 9], warmUpMs: 5_000, loadMs: 4_000, concurrency: 128, variants, etcd: true }

export const run = async (quick: boolean, flags: ReadonlyArray<string> = []) => {
  if (flags.includes("--profile")) return profileOnly(flags)
  const start = readMachine()
  const before = flags.indexOf("--before-bundle")
  const beforeDir = before < 0 ? undefined : flags[before + 1]
  if (before >= 0 && (beforeDir === undefined || !existsSync(resolve(beforeDir, "reef.mjs")))) {
    throw new Error(`--before-bundle needs a directory holding a saved bundle's reef.mjs, got ${beforeDir}`)
  }
  const variants = beforeDir === undefined ? VARIANTS : beforeAfter(beforeDir)
  // `--ns 5,9`: only these group sizes (a before/after at one size, with more rounds: REEF_BENCH_PAIRS).
  const ns = flags.indexOf("--ns") < 0 ? undefined : flags[flags.indexOf("--ns") + 1]?.split(",").map(Number)
  if (ns !== undefined && (ns.length === 0 || ns.some((n) => !Number.isInteger(n) || n < 1))) {
    throw new Error(`--ns needs group sizes such as 5,9, got ${flags[flags.indexOf("--ns") + 1]}`)
  }
  // `--no-etcd`: Reef variants only (a before/after of a change).
  const planned = { ...planFor(quick, variants), etcd: !flags.includes("--no-etcd") }
  const { plan, rounds } = await measureCost(ns === undefined ? planned : { ...planned, ns }, quick)
  printCostTable(plan, rounds)
  const { ratios, metrics, curves } = costResults(plan, rounds, "reef")
  for (const [name, r] of Object.entries(ratios)) console.log(`${name}: ${r.median} (${r.min}–${r.max})`)
  const path = await writeResult({
    suite: "popuc-cost",
    quick,
    command: `pnpm bench popuc-cost ${flags.join(" ")}`.trim(),
    machine: machineNow(start),
    ratios,
    curves,
    metrics
  })
  console.log(`wrote ${path}`)
}
