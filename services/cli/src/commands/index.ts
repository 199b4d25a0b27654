/** The `reef` command tree: every command, in the order `reef --help` lists them. */
import type * as Effect from "effect/Effect"
import type { CliFailure } from "../cli/errors.js"
import { group } from "../cli/spec.js"
import { dataCommands } from "../data/index.js"
import { benchCommand } from "./bench.js"
import { runCommand } from "./run.js"
import { statusCommand } from "./status.js"
import { upCommand } from "./up.js"

export const VERSION = "0.1.0"

export const reefCommand = group<Effect.Effect<void, CliFailure>>({
  name: "reef",
  summary: "run and inspect a Reef cluster of actors",
  description:
    "Start a local cluster with `reef up`; in another terminal `reef status`, `reef kv put a 1`, `reef kv get a` and " +
    "`reef run counter --id c9` find it through .reef/cluster.json. Add --help to any command for its options.",
  placeholder: "<command>",
  listHeading: "Commands",
  commands: [upCommand, runCommand, statusCommand, ...dataCommands, benchCommand],
  examples: ["reef up", "reef status --watch", "reef kv put a 1 && reef kv get a", "reef run replica --help"]
})
