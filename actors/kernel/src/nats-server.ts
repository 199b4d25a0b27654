/**
 * A `nats-server` child process: the embedded default of `reef up` and the fixture of every integration
 * test. It listens on a free loopback port (never 4222) with JetStream in a temporary store directory,
 * and can be killed and restarted on the same port and store to test reconnection.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

export class NatsServerError extends Data.TaggedError("NatsServerError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

export interface NatsServerOptions {
  readonly jetstream?: boolean
  readonly port?: number
  /** HTTP monitoring port (`/varz`, `/connz`, ...); none when absent. */
  readonly monitorPort?: number
  /** Milliseconds to wait for "Server is ready". */
  readonly startTimeoutMs?: number
  /** Configuration file text (e.g. an `authorization` block, nats-grants.ts); written next to the store. */
  readonly config?: string
  /** Clients connect over TLS with this certificate; `verify` also requires theirs (mutual TLS). */
  readonly tls?: {
    readonly certFile: string
    readonly keyFile: string
    readonly caFile: string
    readonly verify?: boolean
  }
  /**
   * The server dies with this process however it ends, SIGKILL included (Linux's parent-death signal, set by
   * util-linux's `setpriv --pdeathsig` when installed): a killed `reef up` leaves no server holding its port.
   */
  readonly exitWithParent?: boolean
}

/** nats-server's `tls` block for `tls`. */
export const natsTlsConfig = (tls: NonNullable<NatsServerOptions["tls"]>): string =>
  [
    "tls {",
    `  cert_file: ${JSON.stringify(tls.certFile)}`,
    `  key_file: ${JSON.stringify(tls.keyFile)}`,
    `  ca_file: ${JSON.stringify(tls.caFile)}`,
    `  verify: ${tls.verify === true}`,
    // A loaded machine's handshakes take longer than the default half second.
    "  timeout: 5",
    "}",
    ""
  ].join("\n")

const SETPRIV = "/usr/bin/setpriv"

/** The command that runs `binary args`, under `setpriv --pdeathsig SIGTERM` when asked and available. */
const command = (binary: string, args: ReadonlyArray<string>, exitWithParent: boolean) =>
  exitWithParent && process.platform === "linux" && existsSync(SETPRIV)
    ? { file: SETPRIV, args: ["--pdeathsig", "SIGTERM", "--", binary, ...args] }
    : { file: binary, args: [...args] }

export interface NatsServer {
  readonly url: string
  readonly port: number
  /** `http://127.0.0.1:<monitorPort>` when a monitoring port was asked for. */
  readonly monitorUrl: string | undefined
  readonly storeDir: string
  readonly pid: Effect.Effect<number | undefined>
  /** SIGKILL, no goodbye: clients see the connection drop. */
  readonly kill: Effect.Effect<void>
  /** Starts again on the same port and store directory. */
  readonly restart: Effect.Effect<void, NatsServerError>
}

/** `NATS_SERVER_BIN`, then apt's /usr/sbin location, then PATH. */
export const findNatsServerBinary = (): string | undefined => {
  const candidates = [
    process.env.NATS_SERVER_BIN,
    "/usr/sbin/nats-server",
    "/usr/bin/nats-server",
    ...(process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "nats-server"))
  ]
  return candidates.find((c): c is string => c !== undefined && c !== "" && existsSync(c))
}

export const freePort = Effect.async<number, NatsServerError>((resume) => {
  const server = createServer()
  server.unref()
  server.on("error", (cause) => resume(Effect.fail(new NatsServerError({ reason: `no free port: ${cause}` }))))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const launch = (binary: string, args: ReadonlyArray<string>, timeoutMs: number, exitWithParent: boolean) =>
  Effect.async<ChildProcess, NatsServerError>((resume) => {
    const run = command(binary, args, exitWithParent)
    // setpriv execs the server: the child's pid is the server's.
    const child = spawn(run.file, run.args, { stdio: ["ignore", "ignore", "pipe"] })
    let output = ""
    let settled = false
    const settle = (effect: Effect.Effect<ChildProcess, NatsServerError>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(effect)
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      settle(Effect.fail(new NatsServerError({ reason: `nats-server not ready after ${timeoutMs} ms:\n${output}` })))
    }, timeoutMs)
    child.stderr?.on("data", (chunk: Buffer) => {
      if (settled) return
      output += chunk.toString()
      if (output.includes("Server is ready")) settle(Effect.succeed(child))
    })
    child.on("error", (cause) =>
      settle(Effect.fail(new NatsServerError({ reason: `cannot start ${binary}: ${cause}` })))
    )
    child.on("exit", (code) =>
      settle(Effect.fail(new NatsServerError({ reason: `nats-server exited with ${code}:\n${output}` })))
    )
  })

const stopChild = (child: ChildProcess, signal: NodeJS.Signals) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill(signal)
  })

/** Writes `text` as the server's configuration file, readable by this user only (it may name secrets). */
const writeConfig = (dir: string, text: string): string => {
  const file = join(dir, "nats-server.conf")
  writeFileSync(file, text, { mode: 0o600 })
  return file
}

/** Starts nats-server in the current scope; it is stopped and its store removed when the scope closes. */
export const startNatsServer = (options: NatsServerOptions = {}) =>
  Effect.gen(function* () {
    const binary = findNatsServerBinary()
    if (binary === undefined) {
      return yield* new NatsServerError({
        reason: "nats-server not found: install it (apt-get install -y nats-server) or set NATS_SERVER_BIN"
      })
    }
    const port = options.port ?? (yield* freePort)
    const storeDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "reef-nats-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const config = [options.config ?? "", options.tls === undefined ? "" : natsTlsConfig(options.tls)].join("\n")
    const configArgs = config.trim() === "" ? [] : ["-c", yield* Effect.sync(() => writeConfig(storeDir, config))]
    const args = [
      ...configArgs,
      "-a",
      "127.0.0.1",
      "-p",
      String(port),
      ...(options.monitorPort === undefined ? [] : ["-m", String(options.monitorPort)]),
      ...(options.jetstream === false ? [] : ["-js", "-sd", storeDir])
    ]
    const timeoutMs = options.startTimeoutMs ?? 10_000
    const current = yield* Ref.make<ChildProcess | undefined>(undefined)
    const start = Effect.flatMap(launch(binary, args, timeoutMs, options.exitWithParent === true), (child) =>
      Ref.set(current, child)
    )
    const kill = Effect.flatMap(Ref.getAndSet(current, undefined), (child) =>
      child === undefined ? Effect.void : stopChild(child, "SIGKILL")
    )
    yield* Effect.acquireRelease(start, () =>
      Effect.flatMap(Ref.getAndSet(current, undefined), (child) =>
        child === undefined ? Effect.void : stopChild(child, "SIGTERM")
      )
    )
    const server: NatsServer = {
      url: `nats://127.0.0.1:${port}`,
      port,
      monitorUrl: options.monitorPort === undefined ? undefined : `http://127.0.0.1:${options.monitorPort}`,
      storeDir,
      pid: Effect.map(Ref.get(current), (child) => child?.pid),
      kill,
      restart: Effect.zipRight(kill, start)
    }
    return server
  })
