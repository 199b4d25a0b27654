/** A transaction of the chain's contract runtime, as plain data (its codec lives in runtime/transactions.ts). */
export const TxKind = {
  Transfer: 1,
  Approve: 2,
  Swap: 3,
  Mint: 4,
  Borrow: 5,
  Repay: 6,
  Supply: 7,
  PriceUpdate: 8
} as const
export type TxKind = (typeof TxKind)[keyof typeof TxKind]

export interface Tx {
  readonly kind: TxKind
  /** The user account sending it. */
  readonly sender: number
  /** The contract it calls. */
  readonly target: number
  readonly a: number
  readonly b: number
  readonly amount: number
}
