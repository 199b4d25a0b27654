/**
 * The decisions this replica applied, kept so a peer that self-quit (or restarted) can catch up: a window of
 * the most recent instances, bounded both in instances and in payload bytes, so memory stays flat however
 * long the replica runs. A peer that needs older instances than the window holds (or more than fits one
 * reply) is sent a state snapshot instead (see snapshot.ts).
 */
import { ownPayload, VALUE_OVERHEAD_BYTES, type Value } from "@reef/nic"

export const DEFAULT_LOG_INSTANCES = 100_000
/**
 * About 14k KV commands of 256-byte values: two seconds (~300 instances) of the benchmark's load at N = 5, far
 * more than a self-quit's rejoin needs (a replica further behind gets a snapshot).
 */
export const DEFAULT_LOG_BYTES = 4 * 1024 * 1024

export interface DecisionLogLimits {
  readonly maxInstances?: number
  readonly maxBytes?: number
}

export interface LoggedDecision {
  readonly instance: number
  readonly values: ReadonlyArray<Value>
}

interface Entry {
  readonly values: ReadonlyArray<Value>
  readonly bytes: number
}

const valueBytes = (v: Value) => VALUE_OVERHEAD_BYTES + v.payload.length

export class DecisionLog {
  private readonly entries = new Map<number, Entry>()
  private readonly maxInstances: number
  private readonly maxBytes: number
  private first = 1
  private last = 0
  private bytes = 0

  constructor(limits: DecisionLogLimits = {}) {
    this.maxInstances = limits.maxInstances ?? DEFAULT_LOG_INSTANCES
    this.maxBytes = limits.maxBytes ?? DEFAULT_LOG_BYTES
  }

  /** Records instance `instance` (called in order; instances with nothing delivered are recorded too). */
  append(instance: number, values: ReadonlyArray<Value>): void {
    if (instance <= this.last) return
    if (this.entries.size === 0) this.first = instance
    this.last = instance
    // A payload that is a view into a larger buffer (the whole message it arrived in) is copied, or one
    // retained value would keep that entire buffer alive and the byte bound would be a fiction. The engine's
    // deliveries already come in buffers of their own.
    const kept = values.map(ownPayload)
    const bytes = kept.reduce((sum, v) => sum + valueBytes(v), 0)
    this.entries.set(instance, { values: kept, bytes })
    this.bytes += bytes
    while (this.entries.size > 1 && (this.entries.size > this.maxInstances || this.bytes > this.maxBytes)) {
      this.bytes -= this.entries.get(this.first)?.bytes ?? 0
      this.entries.delete(this.first)
      this.first++
    }
  }

  /** Forgets everything: the replica's state now comes from a snapshot taken before `nextInstance`. */
  reset(nextInstance: number): void {
    this.entries.clear()
    this.bytes = 0
    this.first = nextInstance
    this.last = nextInstance - 1
  }

  get lastInstance(): number {
    return this.last
  }

  get heldBytes(): number {
    return this.bytes
  }

  /**
   * The first decisions from `from` on that fit in `maxBytes` (at least one): what a reply carries when all of
   * them would not fit one (the asker asks again for the rest). Undefined when `from` is older than the window.
   */
  prefix(from: number, maxBytes: number): ReadonlyArray<LoggedDecision> | undefined {
    if (from < this.first) return undefined
    const out: Array<LoggedDecision> = []
    let bytes = 0
    for (let i = from; i <= this.last; i++) {
      const entry = this.entries.get(i)
      bytes += entry?.bytes ?? 0
      if (bytes > maxBytes && out.length > 0) break
      out.push({ instance: i, values: entry?.values ?? [] })
    }
    return out
  }

  /**
   * Decisions `from..last`, or undefined when `from` is older than the window or they would take more than
   * `maxBytes` (one reply's worth; see `prefix`).
   */
  since(from: number, maxBytes = Number.POSITIVE_INFINITY): ReadonlyArray<LoggedDecision> | undefined {
    if (from > this.last) return []
    const part = this.prefix(from, maxBytes)
    return part?.at(-1)?.instance === this.last ? part : undefined
  }
}
