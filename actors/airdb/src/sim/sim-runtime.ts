/**
 * A discrete-event runtime for Effect programs: fibers run on a controlled scheduler and sleep on a
 * simulated clock, and the driver alternates "run every runnable fiber" with "jump to the next wake-up".
 * Nothing waits on real time, so a run is a pure function of its inputs and its seed (TigerBeetle's VOPR
 * idea applied to Effect code), and simulated seconds cost microseconds.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { ControlledScheduler } from "effect/Scheduler"

interface Sleeper {
  readonly at: number
  readonly seq: number
  readonly wake: () => void
  cancelled: boolean
}

/** Simulated time: sleepers in a heap ordered by wake-up time, then by when they went to sleep. */
class SimClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  now = 0
  private seq = 0
  private readonly heap: Array<Sleeper> = []

  unsafeCurrentTimeMillis(): number {
    return this.now
  }
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(Math.round(this.now * 1_000_000))
  }
  readonly currentTimeMillis = Effect.sync(() => this.now)
  readonly currentTimeNanos = Effect.sync(() => this.unsafeCurrentTimeNanos())

  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      const s: Sleeper = {
        at: this.now + Math.max(0, Duration.toMillis(duration)),
        seq: this.seq++,
        wake: () => resume(Effect.void),
        cancelled: false
      }
      this.push(s)
      return Effect.sync(() => {
        s.cancelled = true
      })
    })
  }

  private less(a: Sleeper, b: Sleeper): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq)
  }

  private push(s: Sleeper): void {
    const h = this.heap
    h.push(s)
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1
      if (!this.less(h[i]!, h[parent]!)) break
      ;[h[i], h[parent]] = [h[parent]!, h[i]!]
      i = parent
    }
  }

  private pop(): Sleeper | undefined {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (top === undefined || last === undefined || h.length === 0) return top
    h[0] = last
    for (let i = 0; ; ) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r
      if (m === i) break
      ;[h[i], h[m]] = [h[m]!, h[i]!]
      i = m
    }
    return top
  }

  /** Advances to the next live sleeper's time and wakes every sleeper due then. */
  advance(limitMs: number): "advanced" | "nobody-asleep" | "limit" {
    let next = this.pop()
    while (next?.cancelled) next = this.pop()
    if (next === undefined) return "nobody-asleep"
    if (next.at > limitMs) return "limit"
    this.now = next.at
    next.wake()
    for (;;) {
      const top = this.heap[0]
      if (top === undefined || top.at > this.now) break
      const s = this.pop()!
      if (!s.cancelled) s.wake()
    }
    return "advanced"
  }
}

export type SimOutcome<A, E> =
  | { readonly _tag: "Done"; readonly exit: Exit.Exit<A, E>; readonly simulatedMs: number }
  /** Nothing runnable and nobody asleep: every fiber waits on something that will never happen. */
  | { readonly _tag: "Deadlock"; readonly simulatedMs: number }
  | { readonly _tag: "TimeLimit"; readonly simulatedMs: number }

/** Runs `effect` to completion in simulated time (at most `limitMs`). */
export const runSimulated = <A, E>(effect: Effect.Effect<A, E>, limitMs: number): SimOutcome<A, E> => {
  const scheduler = new ControlledScheduler()
  const clock = new SimClock()
  const fiber = Effect.runFork(effect.pipe(Effect.withClock(clock), Effect.withScheduler(scheduler)), { scheduler })
  for (;;) {
    while (scheduler.tasks.buckets.length > 0) scheduler.step()
    const exit = fiber.unsafePoll()
    if (exit !== null) return { _tag: "Done", exit, simulatedMs: clock.now }
    const advanced = clock.advance(limitMs)
    if (advanced !== "advanced") {
      const outcome = advanced === "limit" ? "TimeLimit" : "Deadlock"
      Effect.runFork(Fiber.interrupt(fiber), { scheduler })
      for (let i = 0; i < 1000 && scheduler.tasks.buckets.length > 0; i++) scheduler.step()
      return { _tag: outcome, simulatedMs: clock.now }
    }
  }
}
