/** Errors of the state store. Thrown from synchronous hot paths; the Effect shells catch them as typed failures. */
import * as Data from "effect/Data"

/** The database holds bytes no writer here produces (a bad file, or a bug). */
export class StoreCorruptionError extends Data.TaggedError("StoreCorruptionError")<{
  readonly what: string
  readonly detail: string
}> {
  override get message() {
    return `state store corrupt: ${this.what}: ${this.detail}`
  }
}

/** Opening, reading or writing the LMDB environment failed. */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly operation: string
  readonly path: string
  readonly cause: unknown
}> {
  override get message() {
    return `state store ${this.operation} (${this.path}) failed: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

/** A read as of a block the store cannot answer: before its history starts or after its head. */
export class BlockOutOfRangeError extends Data.TaggedError("BlockOutOfRangeError")<{
  readonly asOf: number
  readonly head: number
}> {
  override get message() {
    return `cannot read state as of block ${this.asOf}: store head is ${this.head}`
  }
}
