/**
 * The sequential reference executor: runs transactions one at a time in consensus order, with the same rules
 * as Remora (a version for every access, reads included; an invalid signature is a no-op that still advances
 * the versions). Theorem 1 says Remora's state equals this one's; every integration run and every simulator
 * seed compares the two.
 */
import type { Transaction } from "@reef/proto"
import { type ContractOutcome, UndeclaredKeyError } from "../contracts/contract.js"
import { executeContract } from "../contracts/execute.js"
import { genesisValue } from "../contracts/genesis.js"
import type { TxMeta } from "../core/types.js"
import { StateDigestSum } from "./digest.js"

export interface VersionedValue {
  readonly version: number
  readonly value: Uint8Array
}

export type ReferenceStatus = "executed" | "invalid-signature" | "aborted"

export interface ReferenceStep {
  readonly status: ReferenceStatus
  readonly detail: string
}

export class ReferenceExecutor {
  private readonly objects = new Map<string, VersionedValue>()
  /** With `recordHistory`: every value each key took, by version (the simulator checks copies against it). */
  private readonly history: Map<string, Array<Uint8Array>> | undefined

  constructor(options: { readonly recordHistory?: boolean } = {}) {
    this.history = options.recordHistory === true ? new Map() : undefined
  }

  /** The value of (key, version) in the sequential execution, when history is recorded. */
  valueAt(key: string, version: number): Uint8Array | undefined {
    if (version === 0) return genesisValue(key)
    return this.history?.get(key)?.[version]
  }

  get(key: string): VersionedValue {
    return this.objects.get(key) ?? { version: 0, value: genesisValue(key) }
  }

  /**
   * Applies one admitted transaction: its contract's writes if `valid` (the stateless part's verdict) and not
   * aborted, and a new version of every key it declares.
   */
  apply(meta: TxMeta<Transaction>, valid: boolean): ReferenceStep {
    const keys = meta.keys
    const declared = new Set(keys)
    let outcome: ContractOutcome | undefined
    if (valid) {
      outcome = executeContract(meta.payload, (key) => {
        if (!declared.has(key)) throw new UndeclaredKeyError(key)
        return this.get(key).value
      })
    }
    for (const key of keys) {
      const current = this.get(key)
      const written = outcome?.status === "executed" ? outcome.writes.get(key) : undefined
      const value = written ?? current.value
      this.objects.set(key, { version: current.version + 1, value })
      if (this.history !== undefined) {
        let h = this.history.get(key)
        if (h === undefined) {
          h = [genesisValue(key)]
          this.history.set(key, h)
        }
        h.push(value)
      }
    }
    if (outcome === undefined) return { status: "invalid-signature", detail: "signature does not verify" }
    return outcome.status === "executed"
      ? { status: "executed", detail: "" }
      : { status: "aborted", detail: outcome.detail }
  }

  /** Every object touched so far (version ≥ 1). */
  entries(): IterableIterator<[string, VersionedValue]> {
    return this.objects.entries()
  }

  digest(): StateDigestSum {
    const sum = new StateDigestSum()
    for (const [key, { version, value }] of this.objects) sum.add(key, version, value)
    return sum
  }
}
