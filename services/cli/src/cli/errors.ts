/** Errors the CLI words for a person (kept apart from program.ts so command specs load nothing heavy). */
import * as Data from "effect/Data"

/**
 * What a command may fail with: a tagged error whose message is said to the person (`runProgram` prints it).
 * Every Data.TaggedError of Reef's packages is one.
 */
export interface CliFailure {
  readonly _tag: string
  readonly message: string
}

/** A user mistake found while running (an unknown `--role` in this cluster): exit code 2 with usage. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** The cluster is not in the state the command needs (none running, one already running, no replica of a group). */
export class ClusterStateError extends Data.TaggedError("ClusterStateError")<{ readonly message: string }> {}

/** What the command looked up is not there (a key). */
export class NotFoundError extends Data.TaggedError("NotFoundError")<{ readonly message: string }> {}

/** A phase of `reef up` did not finish in its bound, or a workload check failed. */
export class UpFailedError extends Data.TaggedError("UpFailedError")<{ readonly message: string }> {}

/** A program the command runs (`pnpm bench`) failed. */
export class SubprocessFailedError extends Data.TaggedError("SubprocessFailedError")<{
  readonly command: string
  readonly exitCode: number | null
}> {
  override get message() {
    return `${this.command} exited with ${this.exitCode ?? "an error"}`
  }
}

/**
 * The command ran, but what it asked for did not happen (a `kv cas` that did not swap, an AirDB transaction
 * whose condition was false): exit code 1, like etcdctl's txn, so scripts can test it.
 */
export class NotDoneError extends Data.TaggedError("NotDoneError")<{ readonly message: string }> {}
