/**
 * Invariants of (uniform) collaborative consensus, checked at every decision as it happens, including
 * decisions of processes that crash later (App. A: "No two processes p_i, p_j decide different sets"):
 * - validity: every decided value was proposed;
 * - uniform agreement: every decision of an instance is the same set;
 * - integrity: a process decides an instance at most once.
 */
import type { ProcessId, Value } from "../core/types.js"
import { valueKey } from "../core/value.js"

export interface Violation {
  readonly property: string
  readonly detail: string
}

interface FirstDecision {
  readonly by: ProcessId
  readonly keys: string
}

export class DecisionChecker {
  private readonly first = new Map<number, FirstDecision>()
  private readonly decided = new Set<string>()
  decisions = 0

  constructor(private readonly isProposed: (v: Value) => boolean) {}

  onDecide(p: ProcessId, instance: number, values: ReadonlyArray<Value>): Violation | undefined {
    this.decisions++
    const id = `${p}@${instance}`
    if (this.decided.has(id)) return { property: "integrity", detail: `${p} decided instance ${instance} twice` }
    this.decided.add(id)
    const forged = values.find((v) => !this.isProposed(v))
    if (forged !== undefined) {
      return { property: "validity", detail: `${p} decided ${valueKey(forged)} in ${instance}, never proposed` }
    }
    const keys = values.map(valueKey).join(",")
    const first = this.first.get(instance)
    if (first === undefined) {
      this.first.set(instance, { by: p, keys })
      return undefined
    }
    if (first.keys === keys) return undefined
    return {
      property: "uniform agreement",
      detail: `instance ${instance}: ${first.by} decided {${first.keys}} but ${p} decided {${keys}}`
    }
  }

  decisionOf(instance: number): string | undefined {
    return this.first.get(instance)?.keys
  }
}
