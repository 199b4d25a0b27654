/** Why a hint was refused. A refused hint costs its block the prefetch, never correctness (§2.3). */
import * as Data from "effect/Data"

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

export class HintError extends Data.TaggedError("HintError")<{
  readonly reason: HintErrorReason
  readonly detail: string
}> {
  override get message() {
    return `invalid hint (${this.reason}): ${this.detail}`
  }
}
