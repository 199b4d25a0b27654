/**
 * Failures a gRPC service detects at the edge, before any message reaches an actor: a request the client
 * should fix. They are tagged errors like the kernel's, so the one mapping in status.ts turns them into
 * gRPC statuses.
 */
import * as Data from "effect/Data"

/** A request field a service refuses (bad role token, missing target, oversized payload, ...). */
export class InvalidRequestError extends Data.TaggedError("InvalidRequestError")<{
  readonly field: string
  readonly reason: string
}> {
  override get message() {
    return `${this.field}: ${this.reason}`
  }
}
