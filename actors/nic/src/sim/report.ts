/** What one simulated run reports, and how to replay it. */
import type { Violation } from "./decision-checker.js"

export interface RunStats {
  readonly decisions: number
  /** Highest round at which any process decided. */
  readonly maxDecisionRound: number
  readonly messages: number
  readonly droppedMessages: number
  readonly selfCrashes: number
  /** Instances decided by at least one process (1 for single-instance runs). */
  readonly instances: number
  readonly deliveries: number
  readonly rejoins: number
  /** Self-crashed processes that took part again as learners, without a state transfer. */
  readonly learnerRejoins: number
  /** Decisions only killed processes ever had, decided again by the group (shell-checker.ts). */
  readonly lostDecisions?: number
}

export interface RunReport {
  readonly scenario: string
  readonly seed: number
  readonly n: number
  /** Processes given a fault by the scenario (an upper bound on the faulty ones). */
  readonly f: number
  readonly violation: Violation | undefined
  readonly stats: RunStats
  /** The sequence of simulated events at the violation, most recent last (empty when the run is clean). */
  readonly trace: ReadonlyArray<string>
  /** The deliberately broken protocol the run used, if any. */
  readonly mutant?: string | undefined
}

export const replayCommand = (r: Pick<RunReport, "scenario" | "seed" | "n" | "mutant">): string =>
  `pnpm sim popuc --scenario ${r.scenario} --n ${r.n} --seed ${r.seed}${r.mutant === undefined ? "" : ` --mutant ${r.mutant}`}`

export const describeFailure = (r: RunReport): string =>
  [
    `VIOLATION of ${r.violation?.property} in scenario=${r.scenario} n=${r.n} f=${r.f} seed=${r.seed}${r.mutant === undefined ? "" : ` mutant=${r.mutant}`}`,
    `  ${r.violation?.detail}`,
    ...(r.trace.length > 0 ? ["  last events:", ...r.trace.map((l) => `    ${l}`)] : []),
    `  reproduce with: ${replayCommand(r)}`
  ].join("\n")

/** A bounded log of recent events, formatted only when a failure is printed (formatting every event is slow). */
export class TraceRing {
  private readonly entries: Array<readonly [number, string, unknown]> = []

  constructor(private readonly capacity = 16) {}

  add(atUs: number, who: string, what: unknown): void {
    this.entries.push([atUs, who, what])
    if (this.entries.length > this.capacity) this.entries.shift()
  }

  snapshot(): ReadonlyArray<string> {
    return this.entries.map(([atUs, who, what]) => `t=${atUs}us ${who} ${describe(what)}`)
  }
}

const describe = (what: unknown): string =>
  JSON.stringify(what, (_key, v) =>
    v instanceof Uint8Array ? `<${v.byteLength} bytes>` : Array.isArray(v) && v.length > 12 ? `[${v.length} items]` : v
  )
