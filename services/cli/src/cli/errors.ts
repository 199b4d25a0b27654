/** Errors the CLI words for a person (kept apart from program.ts so command specs load nothing heavy). */
import * as Data from "effect/Data"

/** A user mistake found while running (an unknown `--role` in this cluster): exit code 2 with usage. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}
