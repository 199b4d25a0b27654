/** What the simulator's checks report: the property broken and how. */
export type Property =
  | "Theorem 1"
  | "Lemma 8"
  | "Lemma 4"
  | "Theorem 3"
  /** An id is in two blocks of the chain, or a height was written twice with different blocks. */
  | "committed once"
  /** A receipt given changed, or was forgotten (GetReceipt must answer it identically forever). */
  | "receipts stable"
  /** Every committed transaction completes once faults stop (A8). */
  | "liveness"
  | "no crash"
  /** A worker retired gracefully (§4.7) was sent work after its Retired. */
  | "retired gets no work"

export interface Violation {
  readonly property: Property
  readonly message: string
}
