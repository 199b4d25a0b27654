/** The engine loop's timer policy: stall grace, chained deadlines that fell behind, probe period. */
import { describe, expect, it } from "vitest"
import { makeRoundTimerConfig, roundPeriodMs } from "./core/index.js"
import {
  DEFAULT_MAX_QUIT_GRACES,
  onTimerExpiry,
  roundTimerDeadline,
  type TimerExpiry,
  timerPolicyOf
} from "./engine-timers.js"

const config = makeRoundTimerConfig({ interactionMs: 10, driftMs: 1 })
const policy = timerPolicyOf(config)
const onTime: TimerExpiry = {
  round: 1,
  armedMs: 100,
  deadlineMs: 131,
  firedMs: 131,
  lastHeardMs: 120,
  graces: 0,
  wouldQuit: false
}

describe("engine timer policy", () => {
  it("derives its thresholds from the round timer: ΔI late is a stall, a round period of grace, probes every ΔI/2", () => {
    expect(policy).toEqual({
      stallThresholdMs: 10,
      stallGraceMs: roundPeriodMs(config),
      probeEveryMs: 5,
      maxQuitGraces: DEFAULT_MAX_QUIT_GRACES
    })
  })

  it("a timer on time, with a message heard since it was armed, closes its round", () => {
    expect(onTimerExpiry(policy, onTime)).toBe("close")
    expect(onTimerExpiry(policy, { ...onTime, firedMs: 141 })).toBe("close")
  })

  it("a timer more than ΔI late, or one that heard nothing since armed, gets one grace period", () => {
    expect(onTimerExpiry(policy, { ...onTime, firedMs: 141.5 })).toBe("grace")
    expect(onTimerExpiry(policy, { ...onTime, lastHeardMs: 99 })).toBe("grace")
    expect(onTimerExpiry(policy, { ...onTime, lastHeardMs: Number.NEGATIVE_INFINITY })).toBe("grace")
  })

  it("a stalled timer's grace is given once; a second expiry closes unless closing would mean quitting", () => {
    expect(onTimerExpiry(policy, { ...onTime, lastHeardMs: 99, graces: 1 })).toBe("close")
    expect(onTimerExpiry(policy, { ...onTime, firedMs: 200, graces: 1 })).toBe("close")
  })

  it("while closing would suspect more than t peers, the round waits a grace at a time, up to the bound", () => {
    // A heard-nothing stall: every peer silent (the server stalled while this thread ran on time).
    const quitting = { ...onTime, lastHeardMs: 99, wouldQuit: true }
    for (let graces = 0; graces < policy.maxQuitGraces; graces++) {
      expect(onTimerExpiry(policy, { ...quitting, graces })).toBe("grace")
    }
    expect(onTimerExpiry(policy, { ...quitting, graces: policy.maxQuitGraces })).toBe("close")
    // On time and heard from some peer, but closing would still quit: it waits too.
    expect(onTimerExpiry(policy, { ...onTime, wouldQuit: true })).toBe("grace")
    // Round 0 never waits.
    expect(onTimerExpiry(policy, { ...quitting, round: 0 })).toBe("close")
  })

  it("the idle gap before an instance (round 0) always closes: nobody is suspected at its end", () => {
    expect(onTimerExpiry(policy, { ...onTime, round: 0, firedMs: 500, lastHeardMs: 0 })).toBe("close")
  })

  it("a chained timer runs from the last deadline, unless that chain fell behind the clock", () => {
    const last = { instance: 4, deadline: 200 }
    expect(roundTimerDeadline(policy, { instance: 4, afterMs: 31, chained: true }, 195, last)).toBe(231)
    // The previous round closed late (after a stall): the chained deadline is past, a grace period from now.
    expect(roundTimerDeadline(policy, { instance: 4, afterMs: 31, chained: true }, 260, last)).toBe(
      260 + policy.stallGraceMs
    )
    // Not chained, or another instance's chain: from now.
    expect(roundTimerDeadline(policy, { instance: 5, afterMs: 31, chained: true }, 260, last)).toBe(291)
    expect(roundTimerDeadline(policy, { instance: 4, afterMs: 31 }, 260, last)).toBe(291)
  })
})
