/** `reef run <role>`: one subcommand per role of the registry, each with its own options and help. */
import * as Effect from "effect/Effect"
import type { CliFailure } from "../cli/errors.js"
import { group, type Input, leaf, type Options } from "../cli/spec.js"
import { roles } from "../roles/index.js"
import type { RoleSpec } from "../roles/role.js"
import { runCommonOptions } from "./common.js"

export type RunInput = Input<typeof runCommonOptions, {}>

/** The actor id a run will use: `--id`, else `<role>-<pid>`. */
export const actorIdOf = (role: string, input: RunInput): string => input.id ?? `${role}-${process.pid}`

/** A role's own options next to the common ones; a clash is a bug in the role's file. */
export const roleOptions = (role: RoleSpec<any, any>): Options => {
  for (const name of Object.keys(role.options)) {
    if (name in runCommonOptions) throw new Error(`role ${role.role}: option --${name} clashes with a common option`)
  }
  return { ...role.options, ...runCommonOptions }
}

const roleCommand = (role: RoleSpec<any, any>) =>
  leaf({
    name: role.role,
    summary: role.summary,
    ...(role.description === undefined ? {} : { description: role.description }),
    options: roleOptions(role) as typeof runCommonOptions,
    ...(role.examples === undefined ? {} : { examples: role.examples }),
    validate: (input) => role.validate?.(input, actorIdOf(role.role, input)),
    run: (input): Effect.Effect<void, CliFailure> => runRoleLazily(role, input)
  })

/** Loads the runner only when it runs: help and parsing stay light. */
const runRoleLazily = (role: RoleSpec<any, any>, input: RunInput): Effect.Effect<void, CliFailure> =>
  Effect.flatMap(
    Effect.promise(() => import("../run-role.js")),
    ({ runRole }) => runRole(role, input)
  )

export const runCommand = group<Effect.Effect<void, CliFailure>>({
  name: "run",
  summary: "start one actor process of a role, joining a running cluster",
  description:
    "Starts one actor of <role> in this process and keeps it running until Ctrl-C (or SIGTERM), when it " +
    "drains its mailbox and leaves the cluster. It joins the cluster of the nearest .reef/cluster.json (written " +
    "by reef up), so inside a project with a running `reef up` no --nats flag is needed. It prints one " +
    "`reef ready: ...` line once it serves.",
  placeholder: "<role>",
  listHeading: "Roles",
  commands: roles.map(roleCommand),
  examples: ["reef run counter --id c9", "reef run replica --help"]
})
