/** A throw-away `redis-server` (Debian's, installed by scripts/bootstrap.sh) for tests and benchmarks. */
import * as Effect from "effect/Effect"
import { findBinary, ServerProcessError, startServerProcess } from "./server-process.js"

export const REDIS_INSTALL_HINT =
  "redis-server not found: run `bash scripts/bootstrap.sh` (apt-get install -y redis-server)"

/** `$REDIS_SERVER_BIN`, Debian's path, or `redis-server` on PATH. */
export const findRedisServerBinary = (): string | undefined =>
  findBinary("redis-server", "REDIS_SERVER_BIN", ["/usr/bin/redis-server"])

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
