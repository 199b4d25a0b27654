/** A throw-away `redis-server` (Debian's, installed by scripts/bootstrap.sh) for tests and benchmarks. */
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import * as Effect from "effect/Effect"
import { ServerProcessError, startServerProcess } from "./server-process.js"

export const REDIS_INSTALL_HINT =
  "redis-server not found: run `bash scripts/bootstrap.sh` (apt-get install -y redis-server)"

export const findRedisServerBinary = (): string | undefined =>
  [
    process.env.REDIS_SERVER_BIN,
    "/usr/bin/redis-server",
    ...(process.env.PATH ?? "").split(delimiter).map((d) => join(d, "redis-server"))
  ].find((c): c is string => c !== undefined && c !== "" && existsSync(c))

/** No persistence: the log lives as long as the server (tests), or the benchmark run. */
export const startRedisServer = (options: { readonly port?: number } = {}) =>
  Effect.gen(function* () {
    const command = findRedisServerBinary()
    if (command === undefined) return yield* new ServerProcessError({ reason: REDIS_INSTALL_HINT })
    return yield* startServerProcess({
      name: "redis-server",
      command,
      ...(options.port === undefined ? {} : { port: options.port }),
      args: (port) => [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--logfile",
        "",
        "--loglevel",
        "notice"
      ],
      ready: /Ready to accept connections/
    })
  })
