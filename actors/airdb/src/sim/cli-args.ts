/** What both AirDB simulator CLIs share: `--seeds/--seed/--scenario/--mutant` flags and the summary table. */

export interface SimArgs {
  readonly seeds: number
  readonly first: number
  readonly scenarios: ReadonlyArray<string> | undefined
  readonly mutant: string | undefined
}

/** Parses the flags; `defaultSeeds` applies without `--seed` (one seed with it). Throws with `usage`. */
export const parseSimArgs = (args: ReadonlyArray<string>, usage: string, defaultSeeds: number): SimArgs => {
  const flags = new Map<string, string>()
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i]!
    const value = args[i + 1]
    if (!flag.startsWith("--") || value === undefined) throw new Error(`bad argument ${flag}\n${usage}`)
    if (!["seeds", "seed", "scenario", "mutant"].includes(flag.slice(2)))
      throw new Error(`unknown flag ${flag}\n${usage}`)
    flags.set(flag.slice(2), value)
  }
  const int = (name: string, fallback: number) => {
    const raw = flags.get(name)
    const v = raw === undefined ? fallback : Number(raw)
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer`)
    return v
  }
  return {
    seeds: int("seeds", flags.has("seed") ? 1 : defaultSeeds),
    first: int("seed", 1),
    scenarios: flags.get("scenario")?.split(","),
    mutant: flags.get("mutant")
  }
}

/** A right-aligned table (first column left-aligned) with a rule under the header. */
export const formatTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const fmt = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  return [fmt(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(fmt)].join("\n")
}
