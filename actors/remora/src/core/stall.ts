/**
 * The coordinator's liveness backstop as plain data (the shell runs it on its timer; the simulator's model of
 * the shell runs the same code). NATS delivers at most once: a task, report or transfer lost with a server
 * restart would stall its transaction forever, so work in flight with no completion at all for the timeout is
 * replayed. Any completion counts as progress, not only the watermark (a long backlog moves it rarely). Each
 * stall recovery doubles the timeout (up to 8x) until a replay completes: a replay slower than the timeout on a
 * starved machine must not start over forever.
 */
import type { CoordinatorState } from "./coordinator.js"

export interface StallBackstop {
  /** The base timeout (ms; 0: off). */
  readonly baseMs: number
  /** Mutant (the simulator's S2): progress is the watermark only, with a fixed timeout. */
  readonly watermarkOnly: boolean
  progress: { watermark: number; completed: number; atMs: number }
  timeoutMs: number
}

export const createStallBackstop = (baseMs: number, nowMs = 0, watermarkOnly = false): StallBackstop => ({
  baseMs,
  watermarkOnly,
  progress: { watermark: 0, completed: 0, atMs: nowMs },
  timeoutMs: baseMs
})

/** At `nowMs`: the reason to feed a `Recover` input, or undefined. */
export const checkStall = (b: StallBackstop, core: CoordinatorState<unknown>, nowMs: number): string | undefined => {
  const { watermark, size } = core.inflight
  const completed = b.watermarkOnly ? 0 : core.stats.completed
  const moved = watermark !== b.progress.watermark || completed !== b.progress.completed
  // The backed-off timeout holds until the last replay completed: completions that merely trickle in during a
  // slow replay must not bring back the timeout that keeps interrupting it.
  if (moved && (b.watermarkOnly || watermark > core.replayedTo)) b.timeoutMs = b.baseMs
  if (moved || size === 0 || core.active.length === 0) {
    b.progress = { watermark, completed, atMs: nowMs }
    return undefined
  }
  if (b.baseMs <= 0 || nowMs - b.progress.atMs < b.timeoutMs) return undefined
  b.progress = { watermark, completed, atMs: nowMs }
  const waited = b.timeoutMs
  if (!b.watermarkOnly) b.timeoutMs = Math.min(b.timeoutMs * 2, b.baseMs * 8)
  return `no completion for ${waited} ms with ${size} transactions in flight (lost messages?)`
}
