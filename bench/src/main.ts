/**
 * `pnpm bench <suite> [--quick]`: runs one benchmark suite, prints its table and writes
 * bench/results/<suite>.json. Suites: kernel, popuc, soak (`--minutes M`), ira, airdb, remora.
 */
const suites: Record<string, () => Promise<{ run: (quick: boolean, flags: ReadonlyArray<string>) => Promise<void> }>> =
  {
    kernel: () => import("./kernel.js"),
    popuc: () => import("./popuc.js"),
    soak: () => import("./soak.js"),
    ira: () => import("./ira.js"),
    airdb: () => import("./airdb.js"),
    remora: () => import("./remora.js")
  }

const [suite, ...flags] = process.argv.slice(2)
const load = suite === undefined ? undefined : suites[suite]
if (load === undefined) {
  console.error(`usage: pnpm bench <suite> [--quick]; suites: ${Object.keys(suites).join(", ")}`)
  process.exit(2)
}
const { run } = await load()
await run(flags.includes("--quick"), flags)
process.exit(0)
