/**
 * Invariants of uniform total-order broadcast (App. B.2), checked at every output as it happens:
 * - no duplication: "No message is delivered twice" (per process);
 * - no creation: a delivered value with sender p was broadcast by p, with this content;
 * - uniform total order: every process's delivered sequence is a prefix of one reference sequence, which is
 *   how "if p_i delivers m1 before m2, then p_j delivers m1 before m2" reads for sequences (crashed processes
 *   included, their sequences just stop);
 * - uniform agreement of each instance's decision (via DecisionChecker) and of each instance's member list.
 * Validity ("a correct process eventually delivers what it broadcasts") is a liveness check done at the end.
 */
import type { ProcessId, Value } from "../core/types.js"
import { sameValue, valueKey } from "../core/value.js"
import { DecisionChecker, type Violation } from "./decision-checker.js"

interface Broadcast {
  readonly value: Value
  readonly by: ProcessId
  readonly atUs: number
}

interface Delivered {
  readonly key: string
  readonly instance: number
}

export class TobChecker {
  readonly broadcasts = new Map<string, Broadcast>()
  readonly delivered = new Map<ProcessId, Set<string>>()
  private readonly reference: Array<Delivered> = []
  private readonly lengths = new Map<ProcessId, number>()
  private readonly members = new Map<number, string>()
  readonly decisions = new DecisionChecker((v) => this.isProposed(v))
  deliveries = 0
  maxDecisionRound = 0

  /** `exactRounds`: failure-free synchronous runs must decide every instance in exactly this many rounds. */
  constructor(private readonly exactRounds: number | undefined) {}

  private isProposed(v: Value): boolean {
    if (v.kind === "heartbeat") return v.payload.byteLength === 0 && v.members.length === 0
    const b = this.broadcasts.get(valueKey(v))
    return b !== undefined && sameValue(b.value, v)
  }

  onQueued(p: ProcessId, value: Value, atUs: number): Violation | undefined {
    const key = valueKey(value)
    if (this.broadcasts.has(key)) return { property: "value identity", detail: `${p} reused the identity ${key}` }
    this.broadcasts.set(key, { value, by: p, atUs })
    return undefined
  }

  onDecide(p: ProcessId, instance: number, round: number, values: ReadonlyArray<Value>): Violation | undefined {
    this.maxDecisionRound = Math.max(this.maxDecisionRound, round)
    if (this.exactRounds !== undefined && round !== this.exactRounds) {
      return {
        property: "two rounds per instance",
        detail: `${p} decided instance ${instance} at round ${round} in a failure-free synchronous run`
      }
    }
    return this.decisions.onDecide(p, instance, values)
  }

  onStarted(p: ProcessId, instance: number, members: ReadonlyArray<ProcessId>): Violation | undefined {
    const list = members.join(",")
    const known = this.members.get(instance)
    if (known === undefined) this.members.set(instance, list)
    else if (known !== list) {
      return { property: "uniform membership", detail: `instance ${instance}: {${known}} vs ${p}'s {${list}}` }
    }
    return undefined
  }

  onDeliver(p: ProcessId, instance: number, value: Value): Violation | undefined {
    this.deliveries++
    const key = valueKey(value)
    const seen = this.delivered.get(p) ?? new Set<string>()
    this.delivered.set(p, seen)
    if (seen.has(key)) return { property: "no duplication", detail: `${p} delivered ${key} twice` }
    seen.add(key)
    const b = this.broadcasts.get(key)
    if (b === undefined || b.by !== value.proposer || !sameValue(b.value, value)) {
      return { property: "no creation", detail: `${p} delivered ${key}, which ${value.proposer} never broadcast` }
    }
    const position = this.lengths.get(p) ?? 0
    this.lengths.set(p, position + 1)
    const expected = this.reference[position]
    if (expected === undefined) {
      this.reference.push({ key, instance })
      return undefined
    }
    if (expected.key === key && expected.instance === instance) return undefined
    return {
      property: "uniform total order",
      detail: `${p} delivered ${key} (instance ${instance}) at position ${position}, where another process delivered ${expected.key} (instance ${expected.instance})`
    }
  }

  /**
   * Validity at the end of a synchronous run: every value broadcast by a process still running, early enough
   * to have been decided, is delivered by every running process.
   */
  checkValidity(running: ReadonlyArray<ProcessId>, broadcastBeforeUs: number): Violation | undefined {
    for (const [key, b] of this.broadcasts) {
      if (!running.includes(b.by) || b.atUs > broadcastBeforeUs) continue
      const missing = running.find((p) => !this.delivered.get(p)?.has(key))
      if (missing !== undefined) {
        return {
          property: "validity",
          detail: `${key}, broadcast by correct ${b.by} at ${b.atUs}us, never delivered by ${missing}`
        }
      }
    }
    return undefined
  }
}
