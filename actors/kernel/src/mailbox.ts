/**
 * An actor's mailbox: a bounded FIFO that the NATS callback offers to synchronously and one fiber takes from.
 * Effect's Queue does the same job, but polls into a persistent Chunk one element at a time (an allocation per
 * item) and parks its taker on a Deferred with an interrupt hook; at one delivery per message those were a
 * large part of an actor's cost per tell. Here an offer is an array push, a take is a slice of what waits, and
 * only a take from an empty mailbox suspends the fiber.
 */
import * as Effect from "effect/Effect"

export class Mailbox<A> {
  private items: Array<A> = []
  private head = 0
  private wake: (() => void) | undefined

  constructor(readonly capacity: number) {}

  /** Items waiting. */
  get size(): number {
    return this.items.length - this.head
  }

  /** Adds `item` and wakes the taker; false (and nothing added) when the mailbox is full. */
  offer(item: A): boolean {
    if (this.size >= this.capacity) return false
    this.push(item)
    return true
  }

  /** Adds `item` even when the mailbox is full: for the one item that says the mailbox ends. */
  offerPastCapacity(item: A): void {
    this.push(item)
  }

  /**
   * Up to `max` items, oldest first, waiting for one when none waits. A taker interrupted while it waits takes
   * nothing: the items stay for the next take.
   */
  take(max: number): Effect.Effect<ReadonlyArray<A>> {
    return Effect.suspend(() => (this.size > 0 ? Effect.succeed(this.poll(max)) : this.waitThenTake(max)))
  }

  private waitThenTake(max: number): Effect.Effect<ReadonlyArray<A>> {
    return Effect.flatMap(
      Effect.async<void>((resume) => {
        this.wake = () => resume(Effect.void)
      }),
      () => this.take(max)
    )
  }

  private push(item: A): void {
    this.items.push(item)
    const wake = this.wake
    if (wake !== undefined) {
      this.wake = undefined
      wake()
    }
  }

  private poll(max: number): ReadonlyArray<A> {
    const end = Math.min(this.items.length, this.head + max)
    const taken = this.items.slice(this.head, end)
    this.head = end
    if (this.head === this.items.length) {
      this.items = []
      this.head = 0
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return taken
  }
}
