/**
 * Sections of a result: a part of a suite's result that another command measures and writes (`pnpm bench
 * popuc --hosts 3` writes the section `acrossHosts` of popuc.json). A section's ratios and curves are named
 * `<section>…`, its metrics are `metrics[<section>]`, and `sections[<section>]` says how it was measured. A run
 * of the suite itself keeps the sections it did not measure (writeResult); a section's run replaces only its own.
 */
import { existsSync, readFileSync } from "node:fs"
import type { BenchResult, SectionInfo } from "./result.js"

export interface SectionPart {
  readonly info: SectionInfo
  readonly ratios: BenchResult["ratios"]
  readonly metrics: unknown
  readonly curves?: BenchResult["curves"]
}

const ownKeys = <V>(record: Readonly<Record<string, V>> | undefined, section: string, own: boolean) =>
  Object.fromEntries(Object.entries(record ?? {}).filter(([key]) => key.startsWith(section) === own))

/** The stored result at `path`, if any (a section's run adds to it; a suite's run keeps its sections). */
export const readStoredResult = (path: string): BenchResult | undefined =>
  existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as BenchResult) : undefined

/** The section a ratio or curve name belongs to, if any. */
export const sectionOf = (result: BenchResult, name: string): string | undefined =>
  Object.keys(result.sections ?? {}).find((section) => name.startsWith(section))

/** `result` with every section of `stored` that `result` does not have itself. */
export const withKeptSections = (result: BenchResult, stored: BenchResult | undefined): BenchResult => {
  const kept = Object.keys(stored?.sections ?? {}).filter((s) => result.sections?.[s] === undefined)
  if (stored === undefined || kept.length === 0) return result
  const pick = <V>(record: Readonly<Record<string, V>> | undefined) =>
    Object.fromEntries(kept.flatMap((s) => Object.entries(ownKeys(record, s, true))))
  return {
    ...result,
    ratios: { ...result.ratios, ...pick(stored.ratios) },
    curves: { ...result.curves, ...pick(stored.curves) },
    metrics: { ...result.metrics, ...Object.fromEntries(kept.map((s) => [s, stored.metrics[s]])) },
    sections: { ...result.sections, ...Object.fromEntries(kept.map((s) => [s, stored.sections![s]!])) }
  }
}

/** `stored` (or an empty result of `suite`) with section `name` replaced by `part`. */
export const withSection = (
  suite: string,
  stored: BenchResult | undefined,
  name: string,
  part: SectionPart
): BenchResult => {
  const base: BenchResult = stored ?? {
    suite,
    quick: part.info.quick,
    command: part.info.command,
    machine: part.info.machine,
    ratios: {},
    metrics: {}
  }
  const { plots: _plots, ...rest } = base
  return {
    ...rest,
    ratios: { ...ownKeys(base.ratios, name, false), ...part.ratios },
    curves: { ...ownKeys(base.curves, name, false), ...part.curves },
    metrics: { ...base.metrics, [name]: part.metrics },
    sections: { ...base.sections, [name]: part.info }
  }
}
