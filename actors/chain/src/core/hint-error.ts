/**
 * Why a hint was refused. A refused hint costs its block the prefetch, never correctness (§2.3). A plain
 * class with a `_tag` (the core imports no runtime): Effect's catchTag handles it like a tagged error.
 */

export type HintErrorReason =
  | "decompress"
  | "too-large"
  | "bad-magic"
  | "version"
  | "reserved"
  | "truncated"
  | "trailing"
  | "block"
  | "source"
  | "duplicate"
  | "block-mismatch"

export class HintError extends Error {
  readonly _tag = "HintError"

  constructor(readonly fields: { readonly reason: HintErrorReason; readonly detail: string }) {
    super(`invalid hint (${fields.reason}): ${fields.detail}`)
    this.name = "HintError"
  }

  get reason(): HintErrorReason {
    return this.fields.reason
  }

  get detail(): string {
    return this.fields.detail
  }
}
