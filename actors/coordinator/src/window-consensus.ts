/**
 * The `window` consensus source: the paper's evaluation setup (§6.1: "a mock consensus module that adds a
 * constant delay of 300 ms"). A proposal commits `windowMs` after it was made. Optionally a share of proposals is
 * rejected (§3.1: an invalid proposal), or committed after the next one (network asynchrony reordering
 * commitments), so plans made during the window get invalidated. Choices come from a seeded PRNG.
 */
import { Prng } from "@reef/remora"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type BlockRef, ConsensusSource, type ConsensusSourceShape, type Decision } from "./consensus-source.js"

/** What the window source does with a proposal. */
export type WindowFate = "commit" | "reject" | "reorder"

export interface WindowOptions {
  readonly windowMs: number
  /** Share of proposals consensus drops. */
  readonly rejectRate: number
  /** Share of proposals committed after the proposal that follows them. */
  readonly reorderRate: number
  readonly seed: number
  /** Fates of the first proposals, in proposal order; the rates decide the rest. */
  readonly script?: ReadonlyArray<WindowFate>
}

export const DEFAULT_WINDOW_MS = 300

export const defaultWindowOptions: WindowOptions = {
  windowMs: DEFAULT_WINDOW_MS,
  rejectRate: 0,
  reorderRate: 0,
  seed: 1
}

/** What happens to each proposal, in proposal order: a pure function of the seed. */
export class WindowSchedule {
  private readonly prng: Prng
  private scripted = 0

  constructor(private readonly options: WindowOptions) {
    this.prng = new Prng(options.seed)
  }

  next(): WindowFate {
    const script = this.options.script ?? []
    if (this.scripted < script.length) return script[this.scripted++]!
    const r = this.prng.float()
    if (r < this.options.rejectRate) return "reject"
    if (r < this.options.rejectRate + this.options.reorderRate) return "reorder"
    return "commit"
  }
}

export class WindowConsensus implements ConsensusSourceShape {
  readonly name = "window"
  readonly description: string
  private listener: ((d: Decision) => void) | undefined
  private readonly schedule: WindowSchedule
  private readonly timers = new Set<ReturnType<typeof setTimeout>>()
  /** A reordered proposal waiting for the next decision to go first. */
  private held: { readonly decision: Decision; readonly fallback: ReturnType<typeof setTimeout> } | undefined

  constructor(private readonly options: WindowOptions) {
    this.schedule = new WindowSchedule(options)
    this.description = `window ${options.windowMs} ms (reject ${options.rejectRate}, reorder ${options.reorderRate})`
  }

  listen(onDecision: (d: Decision) => void): void {
    this.listener = onDecision
  }

  propose(block: BlockRef): void {
    const fate = this.schedule.next()
    this.after(this.options.windowMs, () => {
      const decision: Decision =
        fate === "reject"
          ? { _tag: "Reject", proposal: block.proposal, reason: "rejected by the window source (reject rate)" }
          : { _tag: "Commit", proposal: block.proposal }
      if (fate === "reorder" && this.held === undefined) {
        // Goes after the next decision, or alone if none comes within half a window.
        const fallback = this.after(this.options.windowMs / 2, () => this.release())
        this.held = { decision, fallback }
        return
      }
      this.emit(decision)
      this.release()
    })
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    this.held = undefined
  }

  private release(): void {
    const held = this.held
    if (held === undefined) return
    this.held = undefined
    clearTimeout(held.fallback)
    this.timers.delete(held.fallback)
    this.emit(held.decision)
  }

  private emit(d: Decision): void {
    this.listener?.(d)
  }

  private after(ms: number, f: () => void): ReturnType<typeof setTimeout> {
    const t = setTimeout(() => {
      this.timers.delete(t)
      f()
    }, ms)
    this.timers.add(t)
    return t
  }
}

export const windowConsensusLayer = (options: Partial<WindowOptions> = {}): Layer.Layer<ConsensusSource> =>
  Layer.scoped(
    ConsensusSource,
    Effect.acquireRelease(
      Effect.sync(() => new WindowConsensus({ ...defaultWindowOptions, ...options })),
      (source) => Effect.sync(() => source.close())
    )
  )
