/**
 * The fast path of `reef run <role>`: an actor process is long-lived and counted in megabytes, so it skips
 * @effect/cli and @effect/platform-node's full context (~35 MB) and parses its few flags with node:util.
 * The @effect/cli definition of `run` in main.ts still documents the same flags for `reef run --help`.
 */
import { parseArgs } from "node:util"
import { runMain } from "@effect/platform-node/NodeRuntime"
import { runRole } from "./run-role.js"

export const RUN_DEFAULTS = { nats: "nats://127.0.0.1:4222", cluster: "local", grpcPort: 50051 } as const

export const parseRunArgs = (argv: ReadonlyArray<string>) => {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      id: { type: "string" },
      nats: { type: "string", default: RUN_DEFAULTS.nats },
      cluster: { type: "string", default: RUN_DEFAULTS.cluster },
      "grpc-port": { type: "string", default: String(RUN_DEFAULTS.grpcPort) },
      // replica
      group: { type: "string" },
      members: { type: "string" },
      "kv-port": { type: "string" },
      engines: { type: "string" },
      "interaction-ms": { type: "string" },
      "instance-gap-ms": { type: "string" },
      "log-bytes": { type: "string" },
      "round-close": { type: "string" }
    }
  })
  const role = positionals[0]
  if (role === undefined)
    throw new Error("usage: reef run <role> [--id ID] [--nats URL] [--cluster NAME] [--grpc-port N]")
  const grpcPort = Number(values["grpc-port"])
  if (!Number.isInteger(grpcPort) || grpcPort < 0 || grpcPort > 65535)
    throw new Error(`invalid --grpc-port ${values["grpc-port"]}`)
  return {
    role,
    options: {
      id: values.id ?? `${role}-${process.pid}`,
      cluster: values.cluster!,
      natsUrl: values.nats!,
      grpcPort,
      flags: {
        group: values.group,
        members: values.members,
        "kv-port": values["kv-port"],
        engines: values.engines,
        "interaction-ms": values["interaction-ms"],
        "instance-gap-ms": values["instance-gap-ms"],
        "log-bytes": values["log-bytes"],
        "round-close": values["round-close"]
      }
    }
  }
}

/**
 * A child of `reef up` (or of a test) stops when its parent is gone, even after a SIGKILL that gave the parent
 * no chance to stop it: Linux re-parents an orphan, so a changed ppid means the parent died.
 */
const exitWithParent = () => {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer)
      process.kill(process.pid, "SIGTERM")
    }
  }, 1_000)
  timer.unref()
}

export const main = (argv: ReadonlyArray<string>) => {
  if (process.env.REEF_EXIT_WITH_PARENT === "1") exitWithParent()
  const { role, options } = parseRunArgs(argv)
  runMain(runRole(role, options))
}
