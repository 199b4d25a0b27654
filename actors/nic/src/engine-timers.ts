/**
 * The engine loop's timer policy, as pure functions of plain numbers: where a round timer is due, what its
 * expiry does, and when a round still open asks the transport about its silent peers.
 *
 * Stalls. A round timer that runs more than one interaction (ΔI) after its deadline means the engine thread
 * did not run for that long; one that expires with not a single message heard since it was armed means no
 * peer could reach the thread for a whole round (with at most t crashed, some peer is alive and sends every
 * round). Either way the process, or the whole machine, was most likely stalled (descheduled, paused) and
 * its peers with it, so their messages of this round are only now being sent, by threads that all resume
 * with a backlog. Closing the round at once would suspect them for this thread's own stall, and enough of
 * those make a correct replica self-quit. Such a timer gets one more round period, once; the round still
 * closes as soon as every awaited peer is heard from. Closing a round later than its timer is always safe
 * (App. A: safety does not depend on timing); a peer that really crashed is still suspected on time whenever
 * this thread ran on time and heard from the others.
 *
 * Quitting. A round that would close with more than t peers suspected makes this process self-quit, and a
 * rejoin costs far more than waiting. Under CPU starvation the nats-server itself stalls while the engine
 * threads' timers still run on time: every engine of an idle group then hears nothing for a few round
 * periods, all suspect everyone, and all self-quit together (measured: an idle group at load ~30, one
 * grace used up, every engine quit at the same instance). So while closing would mean quitting, the round
 * waits one more round period at a time, up to `maxQuitGraces`; it closes at once when the peers are heard.
 * A process really cut off (or a group whose in-flight messages a server restart lost) still quits, later.
 *
 * Gone peers. With rounds closed on all heard, the round under way when a peer dies waits for it until the
 * round timer, and that wait is the whole write stall of a failover. A dead process's connection is gone at
 * once and the server can tell: a round still open ΔI/2 after it started asks the transport about every peer
 * it still waits for, and again every ΔI/2 while it waits (a killed process takes a while to die, and its
 * connection lives until then). ΔI/2 is well past a round's usual length under load, so probes are rare
 * without failures; a live but slow peer just answers the probe, which changes nothing.
 */
import { type ArmedTimer, type RoundTimerConfig, roundPeriodMs, timerDeadline } from "./core/index.js"

export interface TimerPolicy {
  /** A timer that fires later than this past its deadline means the thread stalled. */
  readonly stallThresholdMs: number
  /** The one extra wait a stalled round timer gets (a round period). */
  readonly stallGraceMs: number
  /** How long a round waits before probing its unheard peers, and between probes. */
  readonly probeEveryMs: number
  /** Grace periods a round gets in all while closing it would make this process quit. */
  readonly maxQuitGraces: number
}

export const DEFAULT_MAX_QUIT_GRACES = 8

export const timerPolicyOf = (c: RoundTimerConfig): TimerPolicy => ({
  stallThresholdMs: c.interactionMs,
  stallGraceMs: roundPeriodMs(c),
  probeEveryMs: c.interactionMs / 2,
  maxQuitGraces: DEFAULT_MAX_QUIT_GRACES
})

/**
 * When a timer armed at `nowMs` is due. A chain that fell behind the clock (the previous round closed late,
 * after a stall) would close this round before any peer could answer: it gets a grace period from now.
 */
export const roundTimerDeadline = (
  policy: TimerPolicy,
  timer: { readonly instance: number; readonly afterMs: number; readonly chained?: boolean },
  nowMs: number,
  last: ArmedTimer | undefined
): number => {
  const chained = timerDeadline(timer, nowMs, last)
  return chained < nowMs ? nowMs + policy.stallGraceMs : chained
}

/** What the loop knows when a round timer fires. */
export interface TimerExpiry {
  /** Round 0 is the idle gap before an instance: nobody is suspected at its end. */
  readonly round: number
  readonly armedMs: number
  readonly deadlineMs: number
  readonly firedMs: number
  /** When the last well-formed engine message arrived (-Infinity: never). */
  readonly lastHeardMs: number
  /** Grace periods this round's timer already got. */
  readonly graces: number
  /** Closing the round now would suspect more than t peers: this process would self-quit. */
  readonly wouldQuit: boolean
}

/** `close`: the round times out now; `grace`: the thread stalled, the round gets `stallGraceMs` more. */
export type ExpiryAction = "close" | "grace"

export type OnTimerExpiry = (policy: TimerPolicy, expiry: TimerExpiry) => ExpiryAction

export const onTimerExpiry: OnTimerExpiry = (policy, e) => {
  if (e.round === 0) return "close"
  const late = e.firedMs - e.deadlineMs > policy.stallThresholdMs
  const heardNothing = e.lastHeardMs < e.armedMs
  if (e.graces === 0 && (late || heardNothing)) return "grace"
  return e.wouldQuit && e.graces < policy.maxQuitGraces ? "grace" : "close"
}
