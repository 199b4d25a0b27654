/**
 * The round timer of §6.2 and App. A as pure arithmetic. The shell owns the real timer; the cores only say
 * how long the next round lasts (`SetTimer.afterMs`).
 *
 * - Period: "The timer calls timeout every time interval of duration ΔI + ΔW + ΔD, i.e., the maximum delay
 *   in which correct processes can expect to receive a message."
 * - Drift correction: "in the occurrence of a round mismatch ... the consensus engine adjusts the round timer
 *   by not only anticipating the next round but also slightly reducing the round duration." A round that was
 *   closed early by a message of the next round (a catch-up) starts the next round now and shortens it by
 *   `catchUpShortenMs`, so a lagging replica's own timer converges on its peers' instead of trailing them.
 */

export interface RoundTimerConfig {
  /** ΔI: bound on most interaction latencies (send + network + processing). */
  readonly interactionMs: number
  /** ΔW: window within which all processes start (Alg. 3 gives ΔW = 2ΔI). */
  readonly windowMs: number
  /** ΔD: bound on the clock drift between two processes over a round. */
  readonly driftMs: number
  /** How much shorter a round is when it was started by a catch-up (default ΔD). */
  readonly catchUpShortenMs: number
  /**
   * Host turnaround: how long after deciding an instance the next one opens (default 0, the paper's
   * back-to-back instances). Clients answered at a decision send their next request within about one
   * interaction; opening the next instance at once would leave those requests for the instance after it, so a
   * closed-loop client would only ever use every other instance. Not a round: no message is due in it.
   */
  readonly instanceGapMs?: number
  /**
   * Close a round as soon as every member this process still waits for has been heard from, instead of at
   * its timer (default false, the paper's timed rounds). The timer then only bounds the wait for a silent
   * peer. Messages of the next round are held until the round closes rather than closing it at once, so a
   * peer that advanced early never makes this one suspect a third whose message is still in flight. The
   * instance gap becomes an idle gap: taken only when this process has nothing to propose, and cut short by
   * a local broadcast. Closing a round earlier is indistinguishable from a timer that fired earlier, and
   * safety never depends on timing (App. A), so only the pace changes.
   */
  readonly closeOnAllHeard?: boolean
}

export const instanceGapMs = (c: RoundTimerConfig): number => c.instanceGapMs ?? 0

export const closesOnAllHeard = (c: RoundTimerConfig): boolean => c.closeOnAllHeard === true

/**
 * Why a round was closed: its own timer fired, a message of the next round arrived first, or (with
 * `closeOnAllHeard`) every awaited member was heard from.
 */
export type RoundCloseCause = "timeout" | "catchUp" | "allHeard"

export const roundPeriodMs = (c: RoundTimerConfig): number => c.interactionMs + c.windowMs + c.driftMs

/** The last round timer a shell armed: a chained one (`SetTimer.chained`) is measured from its deadline. */
export interface ArmedTimer {
  readonly instance: number
  readonly deadline: number
}

/**
 * When a timer the core asked for expires, in the shell's clock (`unitsPerMs` of it per ms, scaled by a
 * simulated clock rate): `afterMs` from now, or from the previous deadline of the same instance when chained.
 */
export const timerDeadline = (
  timer: { readonly instance: number; readonly afterMs: number; readonly chained?: boolean },
  now: number,
  last: ArmedTimer | undefined,
  unitsPerMs = 1
): number =>
  (timer.chained === true && last?.instance === timer.instance ? last.deadline : now) + timer.afterMs * unitsPerMs

export const nextRoundDurationMs = (c: RoundTimerConfig, cause: RoundCloseCause): number =>
  cause === "catchUp" ? roundPeriodMs(c) - c.catchUpShortenMs : roundPeriodMs(c)

/**
 * Builds a validated config. The one constraint beyond positivity: a shortened round must still last at least
 * 2ΔI. A replica that caught up started its round up to ΔI after the earliest one, and the latest replica's
 * message may need another ΔI to arrive; a shorter round would close before it and suspect a correct peer.
 */
export const makeRoundTimerConfig = (c: {
  readonly interactionMs: number
  readonly windowMs?: number
  readonly driftMs: number
  readonly catchUpShortenMs?: number
  readonly instanceGapMs?: number
  readonly closeOnAllHeard?: boolean
}): RoundTimerConfig => {
  const config: RoundTimerConfig = {
    interactionMs: c.interactionMs,
    windowMs: c.windowMs ?? 2 * c.interactionMs,
    driftMs: c.driftMs,
    catchUpShortenMs: c.catchUpShortenMs ?? c.driftMs,
    ...(c.instanceGapMs === undefined ? {} : { instanceGapMs: c.instanceGapMs })
  }
  for (const [name, v] of Object.entries(config)) {
    if (!Number.isFinite(v) || v < 0) throw new Error(`round timer: ${name} must be a finite number >= 0, got ${v}`)
  }
  if (config.interactionMs <= 0) throw new Error("round timer: interactionMs must be > 0")
  if (nextRoundDurationMs(config, "catchUp") < 2 * config.interactionMs) {
    throw new Error("round timer: a shortened round must last at least 2 × interactionMs")
  }
  return c.closeOnAllHeard === true ? { ...config, closeOnAllHeard: true } : config
}

/** Nearest-rank percentile of a non-empty sample, `q` in (0, 1]. */
export const percentile = (samples: ReadonlyArray<number>, q: number): number => {
  if (samples.length === 0) throw new Error("percentile: no samples")
  if (!(q > 0 && q <= 1)) throw new Error(`percentile: q must be in (0, 1], got ${q}`)
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
}

export interface CalibrationOptions {
  /** Which latency percentile stands for ΔI (default 0.999: "most interaction latency"). */
  readonly percentile?: number
  /** Multiplier on that percentile (default 1.25): the paper's "safety margin" over the worst case seen. */
  readonly safetyFactor?: number
  /** Oscillator tolerance of the replicas' clocks in parts per million (default 100). */
  readonly clockDriftPpm?: number
}

/**
 * Bootstrap calibration used by the engine shell: measured one-way interaction latencies (ms) in, a round
 * timer out. ΔI is a high percentile times a safety factor; ΔW = 2ΔI as sync-start guarantees; ΔD is what two
 * clocks with the given tolerance can drift apart over one round, rounded up to at least 1 µs. Only
 * performance depends on these numbers: a too-small period turns slow messages into omissions, never into
 * disagreement.
 */
export const calibrateRoundTimer = (
  samplesMs: ReadonlyArray<number>,
  options: CalibrationOptions = {}
): RoundTimerConfig => {
  if (samplesMs.some((s) => !Number.isFinite(s) || s < 0)) throw new Error("calibration: samples must be >= 0")
  const safetyFactor = options.safetyFactor ?? 1.25
  if (!(safetyFactor >= 1)) throw new Error("calibration: safetyFactor must be >= 1")
  const interactionMs = Math.max(percentile(samplesMs, options.percentile ?? 0.999) * safetyFactor, 0.001)
  const windowMs = 2 * interactionMs
  const relativeDrift = (2 * (options.clockDriftPpm ?? 100)) / 1e6
  const driftMs = Math.max(((interactionMs + windowMs) * relativeDrift) / (1 - relativeDrift), 0.001)
  return makeRoundTimerConfig({ interactionMs, windowMs, driftMs })
}
