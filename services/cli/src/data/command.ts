/**
 * Data-plane commands (`reef status`, `reef kv get`, `reef ping`, ...): client commands that find the cluster
 * the same way (`--gateway`, else the cluster file of a running `reef up`), print the same way (`-o text|json`,
 * `--json`), trace the same way (a client span per command, so `reef kv put` is one trace from the CLI through
 * the replica to the consensus instance), and fail the same way (one line).
 *
 * A command says what to do (`run`, which loads its packages inside) and how its result reads (`text`); the
 * JSON form is the result itself unless `json` says otherwise. A command that streams (`reef watch`) prints
 * each item with `context.emit` (JSON: one object per line) and never returns.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CliFailure } from "../cli/errors.js"
import {
  type Args,
  type CommandDoc,
  type CommandInput,
  type Input,
  type LeafSpec,
  leaf,
  type Options
} from "../cli/spec.js"
import { type Style, stdoutStyle } from "../cli/terminal.js"
import type { ClusterFile } from "../cluster-file.js"
import { clientOptions } from "../commands/common.js"

export interface ClientContext {
  /** `host:port` of the gateway. */
  readonly gateway: string
  /** Where the gateway address came from, for error messages. */
  readonly gatewaySource: "flag" | "cluster file" | "default"
  readonly clusterFile: ClusterFile | undefined
  /** Why no running cluster was found (naming the file looked for), when none was. */
  readonly noCluster?: string
  /**
   * Set when a cluster file was named (--cluster-file, $REEF_CLUSTER_FILE) but runs no cluster and no --gateway
   * was given: a command that needs the gateway fails with this line rather than trying the default address.
   */
  readonly clusterProblem?: string
  readonly timeoutMs: number
  readonly format: "text" | "json"
  readonly style: Style
  /** Prints one item now, in the chosen format (an item of the command's result type). */
  readonly emit: (item: unknown) => Effect.Effect<void>
}

export type ClientInput<O extends Options, A extends Args> = Input<O & typeof clientOptions, A>

export interface DataCommandSpec<O extends Options, A extends Args, R>
  extends CommandDoc,
    Omit<CommandInput<O, A>, "args"> {
  /** The command as a user types it after `reef` (`kv put`): the name of its client span. */
  readonly command: string
  readonly args?: A
  /** The result to print, or nothing when the command printed its items with `emit`. */
  readonly run: (input: ClientInput<O, A>, context: ClientContext) => Effect.Effect<R | void, CliFailure, Scope.Scope>
  readonly text: (result: R, style: Style) => string
  readonly json?: (result: R) => unknown
  /**
   * Why the result means that what was asked did not happen (`not swapped: the value is "1"`), if it does: the
   * command then exits 1 with that line (JSON output is still printed first).
   */
  readonly notDone?: (result: R) => string | undefined
}

export const dataCommand = <const O extends Options, const A extends Args, R>(
  spec: DataCommandSpec<O, A, R>
): LeafSpec<O & typeof clientOptions, A, Effect.Effect<void, CliFailure>> => {
  for (const name of Object.keys(spec.options)) {
    if (name in clientOptions) throw new Error(`reef ${spec.command}: option --${name} clashes with a client option`)
  }
  return leaf({
    name: spec.name,
    summary: spec.summary,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    options: { ...spec.options, ...clientOptions } as O & typeof clientOptions,
    args: (spec.args ?? {}) as A,
    ...(spec.examples === undefined ? {} : { examples: spec.examples }),
    ...(spec.validate === undefined
      ? {}
      : { validate: spec.validate as (input: Input<O & typeof clientOptions, A>) => string | undefined }),
    run: (input) =>
      Effect.flatMap(
        Effect.promise(() => import("./client.js")),
        ({ runClientCommand }) => runClientCommand(spec, input as ClientInput<O, A>, stdoutStyle())
      )
  })
}
