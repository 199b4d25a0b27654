/** What an AirDB client can fail with: tagged errors, each saying what to do about it. */
import * as Data from "effect/Data"
import type { AbortReason } from "../core/types.js"

/** A request AirDB refuses before doing anything: an empty or oversized key, an oversized value. */
export class AirDbInvalidArgument extends Data.TaggedError("AirDbInvalidArgument")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** A transaction whose intention would not fit one append of the store: split it. */
export class TransactionTooLarge extends Data.TaggedError("TransactionTooLarge")<{
  readonly bytes: number
  readonly limitBytes: number
}> {
  override get message() {
    return `transaction intention of ~${this.bytes} bytes exceeds the store's ${this.limitBytes}-byte append limit: split it`
  }
}

/** The transaction aborted on every attempt (conflicts with concurrent commits). */
export class TransactionAborted extends Data.TaggedError("TransactionAborted")<{
  readonly reason: AbortReason | "snapshot-moved"
  readonly key?: string
  readonly attempts: number
}> {
  override get message() {
    return `transaction aborted after ${this.attempts} attempt(s): ${this.reason}${this.key === undefined ? "" : ` on key ${JSON.stringify(this.key)}`}`
  }
}

/** Storage did not answer within the retries; an append's outcome may still be pending (see `outcomeUnknown`). */
export class StorageUnavailable extends Data.TaggedError("StorageUnavailable")<{
  readonly operation: string
  readonly reason: string
  /** True when a commit was appended or being appended: it may still commit once storage answers. */
  readonly outcomeUnknown: boolean
}> {
  override get message() {
    return `storage unavailable during ${this.operation}${this.outcomeUnknown ? " (the commit's outcome is unknown)" : ""}: ${this.reason}`
  }
}

/** Stored data this client cannot apply (corrupt or foreign). The client stops: applying around it would diverge. */
export class StoreCorrupt extends Data.TaggedError("StoreCorrupt")<{ readonly reason: string }> {
  override get message() {
    return `store corrupt: ${this.reason}`
  }
}

/** The store was made by an incompatible version or with parameters this client cannot use. */
export class StoreIncompatible extends Data.TaggedError("StoreIncompatible")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

export class ClientClosed extends Data.TaggedError("ClientClosed")<{}> {
  override get message() {
    return "the AirDB client is closed"
  }
}

export type AirDbError =
  | AirDbInvalidArgument
  | TransactionTooLarge
  | TransactionAborted
  | StorageUnavailable
  | StoreCorrupt
  | StoreIncompatible
  | ClientClosed
