/**
 * `pnpm bench <suite> [--quick]`: runs one benchmark suite, prints its table, writes
 * bench/results/<suite>.json with its plots and regenerates bench/results/SUMMARY.md.
 * `pnpm bench all [--quick]` runs every suite but soak, each in a process of its own, one after another;
 * `pnpm bench summary` only redraws the plots from the stored results and regenerates SUMMARY.md.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { readResults, resultsDir, writePlots, writeSummary } from "./harness/index.js"

type Suite = () => Promise<{ run: (quick: boolean, flags: ReadonlyArray<string>) => Promise<void> }>

const suites: Record<string, Suite> = {
  kernel: () => import("./kernel.js"),
  popuc: () => import("./popuc.js"),
  "popuc-cost": () => import("./popuc-cost.js"),
  soak: () => import("./soak.js"),
  ira: () => import("./ira.js"),
  airdb: () => import("./airdb.js"),
  remora: () => import("./remora.js"),
  redis: () => import("./redis.js"),
  tls: () => import("./tls.js")
}

/** What `all` runs: every suite but the soak, which is long by design (`pnpm bench soak --minutes M`). */
const ALL = Object.keys(suites).filter((s) => s !== "soak")

const [suite, ...flags] = process.argv.slice(2)
if (suite === "summary") {
  // Plots again from every stored result's curves (the plotting code may be newer than the run), then SUMMARY.md.
  for (const result of readResults(resultsDir)) await writePlots(result)
  console.log(`wrote ${writeSummary(resultsDir)} and the plots`)
  process.exit(0)
}
if (suite === "all") {
  const failed: Array<string> = []
  for (const name of ALL) {
    const started = performance.now()
    console.log(`\n== bench ${name} ${flags.join(" ")}`)
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), name, ...flags], { stdio: "inherit" })
    console.log(
      `== bench ${name}: exit ${r.status ?? r.signal}, ${((performance.now() - started) / 1000).toFixed(0)} s`
    )
    if (r.status !== 0) failed.push(name)
  }
  console.log(`wrote ${writeSummary(resultsDir)}`)
  if (failed.length > 0) console.error(`bench all: failed: ${failed.join(", ")}`)
  process.exit(failed.length > 0 ? 1 : 0)
}
const load = suite === undefined ? undefined : suites[suite]
if (load === undefined) {
  console.error(`usage: pnpm bench <suite|all|summary> [--quick]; suites: ${Object.keys(suites).join(", ")}`)
  process.exit(2)
}
const { run } = await load()
await run(flags.includes("--quick"), flags)
process.exit(0)
