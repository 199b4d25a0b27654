/**
 * The benchmark contract: `pnpm bench <suite>` writes bench/results/<suite>.json, one plot (SVG + its
 * Vega-Lite spec) per curve, and regenerates bench/results/SUMMARY.md. `writeResult` refuses a result that
 * breaks the harness's rules (`checkResult`): a measured ratio without a median and a min–max over at least
 * two interleaved rounds (three in a full run), a simulated ratio outside its section or without `Sim` in its
 * name, a measured one named `Sim`.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { intervalBetween, type MachineInterval, type MachineReading, readMachine } from "./machine.js"
import { type Curve, writePlot } from "./plot.js"
import type { Ratio } from "./ratio.js"
import { readStoredResult, type SectionPart, sectionOf, withKeptSections, withSection } from "./section.js"
import { writeSummary } from "./summary.js"

export const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "results")

export interface BenchResult {
  readonly suite: string
  readonly quick: boolean
  /** How to reproduce it: "pnpm bench kernel --quick". */
  readonly command: string
  readonly machine: Record<string, unknown> & { readonly run?: MachineInterval }
  /** Measured ratios, each from interleaved rounds. */
  readonly ratios: Readonly<Record<string, Ratio>>
  /** Figures from a simulator or model (virtual time): never compared with a measured peer. */
  readonly simulated?: {
    readonly note?: string
    readonly ratios?: Readonly<Record<string, Ratio>>
    readonly figures?: Readonly<Record<string, unknown>>
  }
  /** Curves reported whole; each is also plotted as <suite>-<name>.svg. */
  readonly curves?: Readonly<Record<string, Curve>>
  readonly metrics: Readonly<Record<string, unknown>>
  /** Written by writeResult: the plot files. */
  readonly plots?: ReadonlyArray<string>
  /** Parts another command measured and wrote (section.ts): how each was measured. */
  readonly sections?: Readonly<Record<string, SectionInfo>>
}

export interface SectionInfo {
  readonly command: string
  readonly quick: boolean
  readonly machine: BenchResult["machine"]
}

/** The machine a result was measured on, and what it was doing over the run (from `start`). */
export const machineNow = (start?: MachineReading): BenchResult["machine"] => ({
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  date: new Date().toISOString(),
  ...(start === undefined ? {} : { run: intervalBetween(start, readMachine()) })
})

const isNumber = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x)

const checkRatio = (where: string, name: string, r: Ratio | number | undefined, minRepeats: number): Array<string> => {
  const problems: Array<string> = []
  const at = `${where}.${name}`
  if (typeof r !== "object" || r === null) return [`${at}: a bare value, not a ratio with median and spread`]
  if (!isNumber(r.median) || !isNumber(r.min) || !isNumber(r.max)) problems.push(`${at}: median/min/max missing`)
  else if (!(r.min <= r.median && r.median <= r.max)) problems.push(`${at}: not min <= median <= max`)
  if (!Array.isArray(r.values) || r.values.length < minRepeats || r.repeats !== r.values.length) {
    problems.push(`${at}: ${r.values?.length ?? 0} repeats, at least ${minRepeats} needed`)
  }
  if (
    typeof r.numerator !== "string" ||
    r.numerator === "" ||
    typeof r.denominator !== "string" ||
    r.denominator === ""
  ) {
    problems.push(`${at}: numerator and denominator must be described`)
  }
  if (typeof r.conditions !== "object" || r.conditions === null) problems.push(`${at}: conditions missing`)
  return problems
}

/** Every way `result` breaks the contract; empty when it keeps it. */
export const checkResult = (result: BenchResult): Array<string> => {
  const problems: Array<string> = []
  for (const [name, r] of Object.entries(result.ratios ?? {})) {
    const section = sectionOf(result, name)
    const quick = section === undefined ? result.quick : result.sections![section]!.quick
    problems.push(...checkRatio("ratios", name, r, quick ? 2 : 3))
    if (/sim/i.test(name)) problems.push(`ratios.${name}: a simulated figure belongs in simulated.ratios`)
    if (typeof r === "object" && r !== null && r.kind !== "measured") problems.push(`ratios.${name}: kind ${r.kind}`)
    if (typeof r === "object" && r !== null && !Array.isArray(r.machine)) {
      problems.push(`ratios.${name}: no machine record per round`)
    }
  }
  for (const [name, r] of Object.entries(result.simulated?.ratios ?? {})) {
    problems.push(...checkRatio("simulated.ratios", name, r, 2))
    if (!name.includes("Sim")) problems.push(`simulated.ratios.${name}: a simulated ratio's name says Sim`)
    if (typeof r === "object" && r !== null && r.kind !== "simulated") {
      problems.push(`simulated.ratios.${name}: kind ${r.kind}`)
    }
  }
  for (const name of Object.keys(result.simulated?.figures ?? {})) {
    if (!name.includes("Sim")) problems.push(`simulated.figures.${name}: a simulated figure's name says Sim`)
  }
  return problems
}

export class BenchContractError extends Error {
  readonly _tag = "BenchContractError"
  constructor(
    readonly suite: string,
    readonly problems: ReadonlyArray<string>
  ) {
    super(`bench ${suite}: result breaks the benchmark contract:\n  ${problems.join("\n  ")}`)
  }
}

/** Writes one plot per curve of `result` into `dir`; returns the SVG names. */
export const writePlots = async (result: BenchResult, dir = resultsDir): Promise<Array<string>> => {
  const plots: Array<string> = []
  for (const [name, curve] of Object.entries(result.curves ?? {})) {
    const file = `${result.suite}-${name}`
    await writePlot(dir, file, curve)
    plots.push(`${file}.svg`)
  }
  return plots
}

/**
 * Checks `result`, writes <dir>/<suite>.json and one plot per curve, and regenerates SUMMARY.md from every
 * result in `dir`. Returns the JSON's path.
 */
export const writeResult = async (measured: BenchResult, dir = resultsDir): Promise<string> => {
  const path = join(dir, `${measured.suite}.json`)
  // The sections other commands wrote into this suite's file stay (section.ts).
  const result = withKeptSections(measured, readStoredResult(path))
  const problems = checkResult(result)
  if (problems.length > 0) throw new BenchContractError(result.suite, problems)
  mkdirSync(dir, { recursive: true })
  const plots = await writePlots(result, dir)
  writeFileSync(path, `${JSON.stringify({ ...result, plots }, null, 2)}\n`)
  writeSummary(dir)
  return path
}

/** Writes section `name` of `suite`'s result (section.ts), keeping the rest of the stored file. */
export const writeSection = (suite: string, name: string, part: SectionPart, dir = resultsDir): Promise<string> =>
  writeResult(withSection(suite, readStoredResult(join(dir, `${suite}.json`)), name, part), dir)
