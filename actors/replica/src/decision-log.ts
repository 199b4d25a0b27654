/**
 * The decisions this replica applied, kept so a peer that self-quit (or restarted) can catch up: a bounded
 * window of the most recent instances. A peer that needs older instances than the window holds cannot
 * rejoin from this replica's log (it would need a snapshot); the bound keeps memory flat under load.
 */
import type { Value } from "@reef/nic"

export const DEFAULT_LOG_INSTANCES = 200_000

export class DecisionLog {
  private readonly entries = new Map<number, ReadonlyArray<Value>>()
  private first = 1
  private last = 0

  constructor(private readonly maxInstances: number = DEFAULT_LOG_INSTANCES) {}

  /** Records instance `instance` (called in order; instances with nothing delivered are recorded too). */
  append(instance: number, values: ReadonlyArray<Value>): void {
    if (instance <= this.last) return
    this.last = instance
    this.entries.set(instance, values)
    while (this.entries.size > this.maxInstances) {
      this.entries.delete(this.first)
      this.first++
    }
    if (this.entries.size === 1) this.first = instance
  }

  get lastInstance(): number {
    return this.last
  }

  /** Decisions `from..last`, or undefined when `from` is older than the window. */
  since(from: number): ReadonlyArray<{ readonly instance: number; readonly values: ReadonlyArray<Value> }> | undefined {
    if (from > this.last) return []
    if (from < this.first) return undefined
    const out: Array<{ instance: number; values: ReadonlyArray<Value> }> = []
    for (let i = from; i <= this.last; i++) out.push({ instance: i, values: this.entries.get(i) ?? [] })
    return out
  }
}
