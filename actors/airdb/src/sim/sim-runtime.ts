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
import type * as Scheduler from "effect/Scheduler"
import { ControlledScheduler } from "effect/Scheduler"
import { PCGRandom } from "effect/Utils"
import { TimedHeap } from "./timed-heap.js"

interface Sleeper {
  readonly at: number
  readonly wake: () => void
  cancelled: boolean
}

/** Simulated time: sleepers in a heap ordered by wake-up time, then by when they went to sleep. */
class SimClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  now = 0
  private readonly heap = new TimedHeap<Sleeper>()

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
        wake: () => resume(Effect.void),
        cancelled: false
      }
      this.heap.push(s)
      return Effect.sync(() => {
        s.cancelled = true
      })
    })
  }

  /** Wakes the sleepers due at the current time (I/O that completes between two ready fibers' turns). */
  wakeDue(): void {
    for (;;) {
      const top = this.heap.peek()
      if (top === undefined || top.at > this.now) return
      const s = this.heap.pop()!
      if (!s.cancelled) s.wake()
    }
  }

  /** Advances to the next live sleeper's time and wakes every sleeper due then. */
  advance(limitMs: number): "advanced" | "nobody-asleep" | "limit" {
    let next = this.heap.pop()
    while (next?.cancelled) next = this.heap.pop()
    if (next === undefined) return "nobody-asleep"
    if (next.at > limitMs) return "limit"
    this.now = next.at
    next.wake()
    for (;;) {
      const top = this.heap.peek()
      if (top === undefined || top.at > this.now) break
      const s = this.heap.pop()!
      if (!s.cancelled) s.wake()
    }
    return "advanced"
  }
}

/**
 * Runs ready fibers one at a time in a seeded random order (each step picks any task ready then, including ones
 * a step just made ready), so one seed explores one of the interleavings a real event loop may produce when
 * several I/O callbacks and fibers are ready at once, and I/O due now may complete between two fibers' turns
 * (an event loop runs I/O callbacks between tasks). Fibers still yield only where Effect's own scheduler would
 * make them (every `maxOpsBeforeYield` operations).
 */
const YIELDS = new ControlledScheduler()

class ShuffledScheduler implements Scheduler.Scheduler {
  private readonly ready: Array<Scheduler.Task> = []
  private readonly random: PCGRandom

  constructor(seed: number) {
    this.random = new PCGRandom(seed)
  }

  scheduleTask(task: Scheduler.Task): void {
    this.ready.push(task)
  }

  shouldYield(fiber: Fiber.RuntimeFiber<unknown, unknown>): number | false {
    return YIELDS.shouldYield(fiber)
  }

  get pending(): boolean {
    return this.ready.length > 0
  }

  /** One in eight turns: let due I/O complete before the next ready fiber runs. */
  get ioTurn(): boolean {
    return this.random.integer(8) === 0
  }

  step(): void {
    const i = this.random.integer(this.ready.length)
    const task = this.ready[i]!
    this.ready[i] = this.ready[this.ready.length - 1]!
    this.ready.pop()
    task()
  }
}

export type SimOutcome<A, E> =
  | { readonly _tag: "Done"; readonly exit: Exit.Exit<A, E>; readonly simulatedMs: number }
  /** Nothing runnable and nobody asleep: every fiber waits on something that will never happen. */
  | { readonly _tag: "Deadlock"; readonly simulatedMs: number }
  | { readonly _tag: "TimeLimit"; readonly simulatedMs: number }

/**
 * Runs `effect` to completion in simulated time (at most `limitMs`). `scheduleSeed`: run ready fibers in a
 * seeded random order instead of the order they became ready.
 */
export const runSimulated = <A, E>(
  effect: Effect.Effect<A, E>,
  limitMs: number,
  scheduleSeed?: number
): SimOutcome<A, E> => {
  const controlled = new ControlledScheduler()
  const shuffled = scheduleSeed === undefined ? undefined : new ShuffledScheduler(scheduleSeed)
  const scheduler: Scheduler.Scheduler = shuffled ?? controlled
  const runnable = () => (shuffled === undefined ? controlled.tasks.buckets.length > 0 : shuffled.pending)
  const clock = new SimClock()
  const step = () => {
    if (shuffled === undefined) return controlled.step()
    if (shuffled.ioTurn) clock.wakeDue()
    if (shuffled.pending) shuffled.step()
  }
  const fiber = Effect.runFork(effect.pipe(Effect.withClock(clock), Effect.withScheduler(scheduler)), { scheduler })
  for (;;) {
    while (runnable()) step()
    const exit = fiber.unsafePoll()
    if (exit !== null) return { _tag: "Done", exit, simulatedMs: clock.now }
    const advanced = clock.advance(limitMs)
    if (advanced !== "advanced") {
      const outcome = advanced === "limit" ? "TimeLimit" : "Deadlock"
      Effect.runFork(Fiber.interrupt(fiber), { scheduler })
      for (let i = 0; i < 100_000 && runnable(); i++) step()
      return { _tag: outcome, simulatedMs: clock.now }
    }
  }
}
