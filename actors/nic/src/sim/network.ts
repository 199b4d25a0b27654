/**
 * The simulated network and the fault model of §2.1: crash-stop and send/receive omissions, where a message
 * later than ΔI counts as an omission. In a synchronous run every message between two correct processes
 * arrives within ΔI; messages to or from a faulty process may be dropped or arrive late. In an asynchronous
 * run any message may be dropped, duplicated or delayed arbitrarily (only safety is checked then).
 */
import type { ProcessId } from "../core/types.js"
import type { Prng } from "./prng.js"

export type TimingKind = "sync" | "async"

export interface TimingModel {
  readonly kind: TimingKind
  /** ΔI in simulated microseconds: the bound on a timely message. */
  readonly interactionUs: number
  readonly minDelayUs: number
  /** One round period in microseconds, to scale late and arbitrary delays. */
  readonly periodUs: number
  /** Async only: probability that any message is dropped, duplicated, or arbitrarily delayed. */
  readonly dropP: number
  readonly duplicateP: number
  readonly slowP: number
  readonly maxSlowUs: number
}

/** How a faulty process misbehaves; a correct process has none of these. */
export interface ProcessFaults {
  readonly crashAtUs: number | undefined
  readonly sendOmitP: number
  readonly recvOmitP: number
  /** Probability that a message to or from this process is late (> ΔI), i.e. an omission by timing. */
  readonly lateP: number
  /** Omissions and late messages happen in [omitFromUs, omitUntilUs) (a transient fault); crashes are unaffected. */
  readonly omitFromUs: number
  readonly omitUntilUs: number
}

export const CORRECT: ProcessFaults = {
  crashAtUs: undefined,
  sendOmitP: 0,
  recvOmitP: 0,
  lateP: 0,
  omitFromUs: 0,
  omitUntilUs: 0
}

export const isFaulty = (f: ProcessFaults): boolean =>
  f.crashAtUs !== undefined || f.sendOmitP > 0 || f.recvOmitP > 0 || f.lateP > 0

export class Network {
  sent = 0
  dropped = 0
  late = 0

  constructor(
    private readonly rng: Prng,
    private readonly timing: TimingModel,
    private readonly faultsOf: (p: ProcessId) => ProcessFaults
  ) {}

  /** Arrival times of one message copy: none if it is lost, two if the network duplicated it. */
  arrivals(from: ProcessId, to: ProcessId, nowUs: number): ReadonlyArray<number> {
    this.sent++
    const { rng, timing } = this
    const sender = this.faultsOf(from)
    const receiver = this.faultsOf(to)
    const omitting = (f: ProcessFaults) => nowUs >= f.omitFromUs && nowUs < f.omitUntilUs
    const lost =
      (omitting(sender) && rng.chance(sender.sendOmitP)) ||
      (omitting(receiver) && rng.chance(receiver.recvOmitP)) ||
      (timing.kind === "async" && rng.chance(timing.dropP))
    if (lost) {
      this.dropped++
      return []
    }
    const lateP = Math.max(omitting(sender) ? sender.lateP : 0, omitting(receiver) ? receiver.lateP : 0)
    const first = nowUs + this.delay(lateP)
    if (timing.kind === "async" && rng.chance(timing.duplicateP)) return [first, nowUs + this.delay(lateP)]
    return [first]
  }

  private delay(lateP: number): number {
    const { rng, timing } = this
    if (timing.kind === "async" && rng.chance(timing.slowP)) return rng.int(0, timing.maxSlowUs)
    if (lateP > 0 && rng.chance(lateP)) {
      this.late++
      return rng.int(timing.interactionUs + 1, timing.interactionUs + 3 * timing.periodUs)
    }
    return rng.int(timing.minDelayUs, timing.interactionUs)
  }
}
