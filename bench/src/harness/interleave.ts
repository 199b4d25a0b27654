/**
 * Interleaved repeats: every contender runs once per round, in the same order (A B, A B, …), so load from
 * elsewhere on a shared machine falls on all of them alike. The machine is read before and after each round
 * (machine.ts); a round run while it was busy is run again, at most `maxRerunsPerRound` times (once in a full
 * run; not with --quick, which keeps to its time), and a round still busy after that is kept and marked busy.
 * Everything is recorded beside the results.
 */
import {
  type BusyPolicy,
  defaultBusyPolicy,
  intervalBetween,
  isBusy,
  type MachineInterval,
  readMachine
} from "./machine.js"

/** Rounds (pairs) in a run: 3 in a full run, 2 with --quick; `REEF_BENCH_PAIRS` overrides (never below 2). */
export const roundsFor = (quick: boolean): number => {
  const fromEnv = Number(process.env.REEF_BENCH_PAIRS)
  const n = Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : quick ? 2 : 3
  return Math.max(2, n)
}

export interface RoundRecord {
  readonly index: number
  readonly machine: MachineInterval
  /** Still busy after its reruns. */
  readonly busy: boolean
  /** Times this round was run again because the machine was busy. */
  readonly reruns: number
  /** The machine during the discarded attempts. */
  readonly discarded: ReadonlyArray<MachineInterval>
}

export type Round<V extends Record<string, unknown>> = RoundRecord & { readonly values: V }

export interface InterleaveOptions {
  readonly quick: boolean
  /** Default: roundsFor(quick). */
  readonly rounds?: number
  /**
   * Default 1 in a full run; 0 with --quick (a busy round is recorded, not run again: quick keeps to its time);
   * `REEF_BENCH_MAX_RERUNS` overrides both.
   */
  readonly maxRerunsPerRound?: number
  readonly policy?: BusyPolicy
  /** Printed before each round (and rerun), e.g. "kernel ask". */
  readonly label?: string
  readonly log?: (line: string) => void
}

export type Contenders<V extends Record<string, unknown>> = {
  readonly [K in keyof V]: (round: number) => Promise<V[K]>
}

/** Runs `contenders` in turn, round after round; returns every kept round with its values and machine record. */
export const interleave = async <V extends Record<string, unknown>>(
  options: InterleaveOptions,
  contenders: Contenders<V>
): Promise<ReadonlyArray<Round<V>>> => {
  const rounds = options.rounds ?? roundsFor(options.quick)
  const fromEnv = Number(process.env.REEF_BENCH_MAX_RERUNS)
  const maxReruns =
    options.maxRerunsPerRound ??
    (process.env.REEF_BENCH_MAX_RERUNS !== undefined && Number.isInteger(fromEnv) && fromEnv >= 0
      ? fromEnv
      : options.quick
        ? 0
        : 1)
  const policy = options.policy ?? defaultBusyPolicy()
  const log = options.log ?? ((line: string) => console.log(line))
  const names = Object.keys(contenders) as Array<keyof V>
  const out: Array<Round<V>> = []
  for (let index = 0; index < rounds; index++) {
    const discarded: Array<MachineInterval> = []
    for (let attempt = 0; ; attempt++) {
      const before = readMachine()
      const values = {} as Record<keyof V, unknown>
      for (const name of names) values[name] = await contenders[name](index)
      const machine = intervalBetween(before, readMachine())
      const busy = isBusy(machine, policy)
      if (options.label !== undefined) {
        log(
          `  ${options.label}: round ${index + 1}/${rounds}${attempt > 0 ? ` (rerun ${attempt})` : ""}, load ${machine.loadavgBefore} -> ${machine.loadavgAfter}, steal ${machine.stealPct}%${busy ? ", busy" : ""}`
        )
      }
      if (busy && attempt < maxReruns) {
        discarded.push(machine)
        continue
      }
      out.push({ index, machine, busy, reruns: attempt, discarded, values: values as V })
      break
    }
  }
  return out
}
