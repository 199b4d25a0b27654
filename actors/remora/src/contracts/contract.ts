/**
 * A contract is a deterministic function over the objects a transaction declares (the paper's assumption A2):
 * no clock, no randomness, no key outside the declared read and write sets. Its stateless part (the signature
 * check) runs elsewhere; this is the stateful part.
 */

/** The keys a call needs: admission refuses a transaction whose declared sets do not cover them. */
export interface ContractAccess {
  readonly reads: ReadonlyArray<string>
  readonly writes: ReadonlyArray<string>
}

/** The declared sets of the calling transaction. */
export interface DeclaredSets {
  readonly readSet: ReadonlyArray<string>
  readonly writeSet: ReadonlyArray<string>
}

export type ContractOutcome =
  | {
      readonly status: "executed"
      /** New values of written keys; a write-set key absent here keeps its value (in a new version). */
      readonly writes: ReadonlyMap<string, Uint8Array>
    }
  | { readonly status: "aborted"; readonly detail: string }

/** Reads a declared object's current value; throws UndeclaredKeyError for any other key. */
export type ObjectReader = (key: string) => Uint8Array

export class UndeclaredKeyError extends Error {
  constructor(readonly key: string) {
    super(`contract touched undeclared key "${key}"`)
  }
}

export interface Contract<A> {
  /** The `ContractCall.contract` name, e.g. "token.transfer". */
  readonly name: string
  /**
   * The key prefix it owns, e.g. "tok/": a transaction of it may declare only keys under it, so no contract
   * reads or writes another's objects (a YCSB write cannot mint tokens).
   */
  readonly namespace: string
  /** Decodes the arguments; throws on malformed bytes. */
  readonly decodeArgs: (bytes: Uint8Array) => A
  /** Why the arguments are out of range, or undefined. */
  readonly checkArgs: (args: A) => string | undefined
  readonly accesses: (args: A, declared: DeclaredSets) => ContractAccess
  /** Runs the call on the values `read` returns. Must not mutate what `read` returned. */
  readonly execute: (args: A, declared: DeclaredSets, read: ObjectReader) => ContractOutcome
}

/** A contract with its argument type erased, for a registry. */
export type AnyContract = Contract<any>

export const executed = (writes: ReadonlyMap<string, Uint8Array>): ContractOutcome => ({ status: "executed", writes })
export const aborted = (detail: string): ContractOutcome => ({ status: "aborted", detail })
