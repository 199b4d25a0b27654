/**
 * The data-plane command registry: client commands of `reef`, in the order `reef --help` lists them. A role
 * adds its commands (a `group` of `dataCommand`s, see kv.ts) in a file next to these and one entry here.
 */
import type * as Effect from "effect/Effect"
import type { CliFailure } from "../cli/errors.js"
import type { CommandSpec } from "../cli/spec.js"
import { airdbCommands } from "./airdb.js"
import { backupCommands } from "./backup.js"
import { kvCommands } from "./kv.js"
import { pingCommand } from "./ping.js"
import { txCommands } from "./tx.js"
import { watchCommand } from "./watch.js"

export const dataCommands: ReadonlyArray<CommandSpec<Effect.Effect<void, CliFailure>>> = [
  kvCommands,
  txCommands,
  backupCommands,
  airdbCommands,
  pingCommand,
  watchCommand
]
