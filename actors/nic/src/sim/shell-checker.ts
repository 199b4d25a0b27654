/**
 * What the hosts of a shell simulation (shell-sim.ts) apply, checked as it happens across every incarnation
 * of every process (a restarted process is a new incarnation that starts with nothing):
 * - uniform agreement: every incarnation that applies an instance applies the same values, in the same
 *   order (a restarted member never decides differently, whatever it joined from). With one exception that
 *   no protocol without a disk can avoid: POPUC lets a process decide alone in its last round while every
 *   other member self-quits (more than t faults), and when that process is killed before anyone learns its
 *   decision, the decision is gone with its memory and the group, collapsed, decides the instance again.
 *   Such a lost decision is counted (`lostDecisions`), not a violation, unless it held a value its own
 *   proposer applied: the replica answers a client when it applies its own value, so that is an
 *   acknowledged write lost, a violation;
 * - no creation: an applied value was broadcast by the incarnation it names, with this content;
 * - no duplication: no incarnation applies a value twice;
 * - a snapshot is the state every incarnation had at its instance;
 * - ready means ready: an incarnation serves only once it applied every instance before the one it joined at.
 * Validity is checked at the end of a synchronous run.
 */
import type { ProcessId, Value } from "../core/types.js"
import type { Violation } from "./decision-checker.js"

interface Broadcast {
  readonly payload: Uint8Array
  readonly by: string
  readonly atUs: number
}

const keyOf = (proposer: ProcessId, incarnation: string, seq: number): string => `${proposer}/${incarnation}#${seq}`

const samePayload = (a: Uint8Array, b: Uint8Array): boolean =>
  a.byteLength === b.byteLength && a.every((x, i) => x === b[i])

export class ShellChecker {
  private readonly broadcasts = new Map<string, Broadcast>()
  /** The values of each instance as applied: the surviving decision (see lost decisions above), and where. */
  private readonly reference = new Map<number, { readonly by: string; readonly keys: string }>()
  /** Every incarnation that applied each instance, with what it applied. */
  private readonly appliers = new Map<number, Map<string, string>>()
  private readonly killed = new Set<string>()
  /** Decisions only killed processes ever applied, replaced by the group's later decision (see above). */
  lostDecisions = 0
  private readonly instanceOf = new Map<string, number>()
  /** The state hash every host has with every instance before the key applied. */
  private readonly hashes = new Map<number, number>()
  private readonly seen = new Map<string, Set<string>>()
  /** The highest instance applied anywhere. */
  applied = 0
  appliedInstances = 0
  deliveries = 0

  onQueued(incarnation: string, proposer: ProcessId, seq: number, payload: Uint8Array, atUs: number): void {
    this.broadcasts.set(keyOf(proposer, incarnation, seq), { payload, by: incarnation, atUs })
  }

  onApplied(incarnation: string, instance: number, values: ReadonlyArray<Value>): Violation | undefined {
    this.appliedInstances++
    this.applied = Math.max(this.applied, instance)
    const seen = this.seen.get(incarnation) ?? new Set<string>()
    this.seen.set(incarnation, seen)
    const keys: Array<string> = []
    for (const v of values) {
      this.deliveries++
      const key = keyOf(v.proposer, v.incarnation, v.seq)
      keys.push(key)
      const b = this.broadcasts.get(key)
      if (b === undefined || b.by !== v.incarnation || !samePayload(b.payload, v.payload)) {
        return { property: "no creation", detail: `${incarnation} applied ${key} at ${instance}, never broadcast` }
      }
      if (seen.has(key)) return { property: "no duplication", detail: `${incarnation} applied ${key} twice` }
      seen.add(key)
    }
    const list = keys.join(",")
    const appliers = this.appliers.get(instance) ?? new Map<string, string>()
    this.appliers.set(instance, appliers)
    appliers.set(incarnation, list)
    const first = this.reference.get(instance)
    if (first === undefined) {
      this.reference.set(instance, { by: incarnation, keys: list })
      for (const key of keys) this.instanceOf.set(key, instance)
      return undefined
    }
    if (first.keys === list) return undefined
    const holders = [...appliers].filter(([, applied]) => applied === first.keys).map(([by]) => by)
    if (!holders.every((by) => this.killed.has(by))) {
      return {
        property: "uniform agreement",
        detail: `instance ${instance}: ${first.by} applied [${first.keys}] but ${incarnation} applied [${list}]`
      }
    }
    // Only killed processes ever had the first decision: lost with them, unless a client was answered on it.
    const acked = first.keys
      .split(",")
      .find((key) => key !== "" && holders.includes(this.broadcasts.get(key)?.by ?? ""))
    if (acked !== undefined) {
      return {
        property: "acknowledged write lost",
        detail: `instance ${instance}: ${first.by} applied its own ${acked} in [${first.keys}], then was killed; the group decided [${list}]`
      }
    }
    this.lostDecisions++
    for (const key of first.keys.split(",")) if (this.instanceOf.get(key) === instance) this.instanceOf.delete(key)
    this.reference.set(instance, { by: incarnation, keys: list })
    for (const key of keys) this.instanceOf.set(key, instance)
    return undefined
  }

  /** `incarnation` was killed (kill -9): what only it had applied is gone. */
  onKilled(incarnation: string): void {
    this.killed.add(incarnation)
  }

  recordHash(nextInstance: number, hash: number): void {
    if (!this.hashes.has(nextInstance)) this.hashes.set(nextInstance, hash)
  }

  onRestored(incarnation: string, nextInstance: number, hash: number): Violation | undefined {
    const expected = this.hashes.get(nextInstance)
    if (expected === undefined || expected === hash) return undefined
    return {
      property: "snapshot",
      detail: `${incarnation} restored a state at instance ${nextInstance} that no host had there`
    }
  }

  onServe(incarnation: string, nextInstance: number, joinedAt: number): Violation | undefined {
    if (nextInstance >= joinedAt) return undefined
    return {
      property: "ready",
      detail: `${incarnation} serves having applied up to ${nextInstance - 1}, but joined at ${joinedAt}`
    }
  }

  /** Every value broadcast before `beforeUs` by an incarnation in `live` is applied before instance `upTo`. */
  checkValidity(live: ReadonlySet<string>, beforeUs: number, upTo: number): Violation | undefined {
    for (const [key, b] of this.broadcasts) {
      if (!live.has(b.by) || b.atUs > beforeUs) continue
      const instance = this.instanceOf.get(key)
      if (instance === undefined || instance >= upTo) {
        return {
          property: "validity",
          detail: `${key}, broadcast by live ${b.by} at ${b.atUs}us, not applied everywhere (${instance ?? "never"}, all up to ${upTo - 1})`
        }
      }
    }
    return undefined
  }
}
