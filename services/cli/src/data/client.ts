/**
 * How every data-plane command runs (data/command.ts): find the gateway, open a client span, run, print in
 * the chosen format, and turn "nobody answers" into one line that says what to do.
 */
import { ObservabilityLive } from "@reef/observability/live"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { type CliFailure, NotDoneError } from "../cli/errors.js"
import type { Args, Options } from "../cli/spec.js"
import type { Style } from "../cli/terminal.js"
import { clusterFileNamed, noClusterMessage, readClusterFile } from "../cluster-file.js"
import { adoptClusterSecurity } from "../cluster-security.js"
import { DEFAULT_GATEWAY } from "../commands/common.js"
import type { ClientContext, ClientInput, DataCommandSpec } from "./command.js"

/** The gateway (or a replica) did not answer: one line with what to do next. */
export class UnreachableError extends Data.TaggedError("UnreachableError")<{ readonly message: string }> {}

/** Bytes for JSON: the text when they are UTF-8, else `{ base64 }`. */
export const bytesJson = (bytes: Uint8Array): string | { readonly base64: string } => {
  const text = Buffer.from(bytes).toString("utf8")
  return Buffer.from(text, "utf8").equals(Buffer.from(bytes)) ? text : { base64: Buffer.from(bytes).toString("base64") }
}

/** Binary-safe JSON (byte arrays through `bytesJson`; a Buffer's own toJSON runs first, so it is undone). */
export const jsonReplacer = (_key: string, value: unknown): unknown => {
  if (value instanceof Uint8Array) return bytesJson(value)
  const buffer = value as { type?: unknown; data?: unknown } | null
  if (buffer?.type === "Buffer" && Array.isArray(buffer.data)) return bytesJson(Uint8Array.from(buffer.data))
  return typeof value === "bigint" ? value.toString() : value
}

export const runClientCommand = <O extends Options, A extends Args, R>(
  spec: DataCommandSpec<O, A, R>,
  input: ClientInput<O, A>,
  style: Style
): Effect.Effect<void, CliFailure> =>
  Effect.gen(function* () {
    const format = input.json ? "json" : input.output
    const lookup = readClusterFile(input["cluster-file"])
    const file = lookup._tag === "Found" ? lookup.file : undefined
    // TLS and the token of a secured cluster, for every gRPC client this command makes (cluster-security.ts).
    adoptClusterSecurity("client", undefined, file)
    const named = clusterFileNamed(input["cluster-file"])
    const gatewaySource = input.gateway !== undefined ? "flag" : file !== undefined ? "cluster file" : "default"
    const gateway = input.gateway ?? file?.gateway ?? DEFAULT_GATEWAY
    const textOf = (item: R) => spec.text(item, style)
    const jsonOf = (item: R) => (spec.json === undefined ? item : spec.json(item))
    const context: ClientContext = {
      gateway,
      gatewaySource,
      clusterFile: file,
      ...(lookup._tag === "Found" ? {} : { noCluster: noClusterMessage(lookup, named) }),
      // A cluster file named on purpose that runs nothing is not silently replaced by the default gateway.
      ...(lookup._tag !== "Found" && named !== undefined && input.gateway === undefined
        ? { clusterProblem: noClusterMessage(lookup, named) }
        : {}),
      timeoutMs: input.timeout,
      format,
      style,
      emit: (item) =>
        Effect.sync(() =>
          process.stdout.write(
            `${format === "json" ? JSON.stringify(jsonOf(item as R), jsonReplacer) : textOf(item as R)}\n`
          )
        )
    }
    const result = yield* spec
      .run(input, context)
      .pipe(Effect.withSpan(`reef ${spec.command}`, { kind: "client", attributes: { "reef.command": spec.command } }))
    if (result !== undefined) {
      const notDone = spec.notDone?.(result as R)
      // In text, the failure line says it all; JSON is for scripts, which get the whole answer too.
      const printed =
        format === "json"
          ? JSON.stringify(jsonOf(result as R), jsonReplacer, 2)
          : notDone === undefined
            ? textOf(result as R)
            : ""
      if (printed !== "") yield* Effect.sync(() => process.stdout.write(`${printed}\n`))
      if (notDone !== undefined) return yield* new NotDoneError({ message: notDone })
    }
  }).pipe(Effect.scoped, Effect.provide(ObservabilityLive({ role: "cli", id: `cli-${process.pid}` })))
