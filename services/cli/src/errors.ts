/**
 * The CLI's own failures, as tagged errors: `runMain` prints their message and exits non-zero.
 */
import * as Data from "effect/Data"

/** A role flag `reef run` cannot use (`--engines x`, `--round-close sometimes`). */
export class InvalidFlagError extends Data.TaggedError("InvalidFlagError")<{
  readonly flag: string
  readonly reason: string
}> {
  override get message() {
    return `--${this.flag} ${this.reason}`
  }
}

/** A part of `reef up --workload` did not finish in time or its check failed. */
export class WorkloadFailedError extends Data.TaggedError("WorkloadFailedError")<{
  readonly part: string
  readonly reason: string
}> {
  override get message() {
    return `${this.part}: ${this.reason}`
  }
}

/** `reef bench <suite>` ended with a non-zero exit code. */
export class BenchFailedError extends Data.TaggedError("BenchFailedError")<{
  readonly suite: string
  readonly exitCode: number
}> {
  override get message() {
    return `bench ${this.suite} exited with ${this.exitCode}`
  }
}

/** A role whose own error channel is not typed yet failed to start; `cause` is what it failed with. */
export class RoleStartError extends Data.TaggedError("RoleStartError")<{
  readonly role: string
  readonly cause: unknown
}> {
  override get message() {
    return `${this.role} did not start: ${(this.cause as Error)?.message ?? String(this.cause)}`
  }
}

/** What starting a role may fail with: any tagged error with a message (each role has its own). */
export interface RoleStartFailure {
  readonly _tag: string
  readonly message: string
}
