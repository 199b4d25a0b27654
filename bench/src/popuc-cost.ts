/**
 * Suite `popuc-cost`: where a POPUC write's CPU and bytes go, per process and per group size, with etcd in the
 * same run (popuc/cost.ts), and the two ways later rounds carry values (`--round-values refs`, the default,
 * and `full`, Alg. 2's whole sets) side by side, interleaved. Writes bench/results/popuc-cost.json and its plots.
 *
 *   pnpm bench popuc-cost [--quick]                       CPU/bytes/messages per committed write, N = 3..9
 *   pnpm bench popuc-cost --profile [--label L] [-- args]  V8 CPU profiles of one replica at N = 5, summarised
 *                                                          into bench/results/profiles/popuc.json under L
 */
import { machineNow, readMachine, writeResult } from "./harness/index.js"
import { type CostPlan, measureCost } from "./popuc/cost.js"
import { costResults, printCostTable } from "./popuc/cost-report.js"
import { profileOnly } from "./popuc/profile.js"

/** The variant the headline ratios are about, and the baseline it is compared with. */
const VARIANTS: CostPlan["variants"] = [
  { name: "reef", args: [] },
  { name: "reefFullValues", args: ["--round-values", "full"] }
]

const planFor = (quick: boolean): CostPlan =>
  quick
    ? { ns: [3, 5, 9], warmUpMs: 2_000, loadMs: 2_000, concurrency: 128, variants: VARIANTS, etcd: true }
    : { ns: [3, 5, 7, 9], warmUpMs: 5_000, loadMs: 4_000, concurrency: 128, variants: VARIANTS, etcd: true }

export const run = async (quick: boolean, flags: ReadonlyArray<string> = []) => {
  if (flags.includes("--profile")) return profileOnly(flags)
  const start = readMachine()
  const { plan, rounds } = await measureCost(planFor(quick), quick)
  printCostTable(plan, rounds)
  const { ratios, metrics, curves } = costResults(plan, rounds, "reef")
  for (const [name, r] of Object.entries(ratios)) console.log(`${name}: ${r.median} (${r.min}–${r.max})`)
  const path = await writeResult({
    suite: "popuc-cost",
    quick,
    command: `pnpm bench popuc-cost${quick ? " --quick" : ""}`,
    machine: machineNow(start),
    ratios,
    curves,
    metrics
  })
  console.log(`wrote ${path}`)
}
