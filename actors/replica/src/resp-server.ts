/**
 * The replica's Redis endpoint: RESP2, and RESP3 after `HELLO 3`, over TCP, parsed with redis-parser. What a
 * command does is the backend's (Reef's own KV state, redis-kv.ts, or the replica's local redis-server,
 * redis-app.ts); this module is the connection side: the commands every Redis server answers itself (PING,
 * HELLO, CLIENT, INFO, COMMAND, CONFIG GET, ...), pipelining and the order of replies.
 *
 * Order: a connection's commands take effect in the order it sent them, as Redis promises a pipeline. Writes
 * in a row are in flight together (the proposer puts the ones of one event-loop turn into one value, and one
 * engine decides a replica's values in the order proposed; with pipelined engines they go one by one), reads in
 * a row wait for one read barrier; a read waits until the writes before it are applied, and a write until the
 * reads before it are answered, so neither can be ordered before an earlier one. Replies are written in
 * request order, the ones completed in a turn of the event loop as one socket write. No fiber per command.
 */
import { createServer, type Server, type Socket } from "node:net"
import Parser from "redis-parser"
import type { CommandKind, CommandSpec } from "./redis-commands.js"
import { upper, wrongArity } from "./redis-commands.js"
import { array, bulk, encodeResp, err, error, int, map, NULL, OK, type RespValue, simple, text } from "./resp-value.js"

/** What the connection side needs from the state behind it. */
export interface RespBackend {
  /** "Reef KV" or "redis-server 7.0.15 (--app redis)": INFO's reef_backend. */
  readonly describe: string
  /** The backend's commands (the connection's own are added to COMMAND's list). */
  readonly commands: ReadonlyMap<string, CommandSpec>
  /** A command's spec, or the error to answer without doing anything. */
  readonly check: (args: ReadonlyArray<Uint8Array>) => CommandSpec | RespValue
  /**
   * Whether writes handed over one after another are applied in that order (one engine: a replica's values are
   * decided in the order it proposed them). When not (pipelined engines), a write waits for the one before it.
   */
  readonly writesInOrder: boolean
  /** Orders a write through consensus; `done` gets its reply once applied here. */
  readonly write: (args: ReadonlyArray<Uint8Array>, done: (reply: RespValue) => void) => void
  /** Answers a read after a read barrier; `done` gets its reply. */
  readonly read: (args: ReadonlyArray<Uint8Array>, done: (reply: RespValue) => void) => void
}

export interface RespServerOptions {
  readonly host: string
  /** 0 picks a free one. */
  readonly port: number
  readonly backend: RespBackend
  /** INFO's server section: who answers. */
  readonly replicaId: string
  readonly group: string
  readonly log: (message: string) => void
}

export interface RespServer {
  readonly address: string
  readonly port: number
  readonly close: () => Promise<void>
}

/** The Redis version clients are told (the commands and replies follow 7.0). */
export const REDIS_COMPAT_VERSION = "7.0.0"

/** Pipelined commands a connection may have queued before it stops reading its socket. */
const MAX_QUEUED = 16_384

const LOCAL: ReadonlyArray<readonly [string, number]> = [
  ["PING", -1],
  ["ECHO", 2],
  ["HELLO", -1],
  ["SELECT", 2],
  ["QUIT", -1],
  ["RESET", 1],
  ["CLIENT", -2],
  ["INFO", -1],
  ["COMMAND", -1],
  ["CONFIG", -2]
]
const LOCAL_COMMANDS: ReadonlyMap<string, CommandSpec> = new Map(
  LOCAL.map(([name, arity]) => [
    name,
    { name: name.toLowerCase(), arity, kind: "local" as CommandKind, flags: ["fast"], keys: [0, 0, 0] as const }
  ])
)

/** CONFIG GET answers these (redis-benchmark and clients ask for some at start). */
const CONFIG: ReadonlyArray<readonly [string, string]> = [
  ["save", ""],
  ["appendonly", "no"],
  ["databases", "1"],
  ["maxmemory", "0"],
  ["cluster-enabled", "no"]
]

interface Entry {
  readonly args: ReadonlyArray<Uint8Array>
  readonly kind: CommandKind | "error"
  started: boolean
  /** The encoded reply once the command is done. */
  reply: Array<Uint8Array> | undefined
}

const globMatch = (pattern: string, name: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
    "i"
  ).test(name)

let nextClientId = 1

class Connection {
  readonly id = nextClientId++
  protocol: 2 | 3 = 2
  name: string | undefined
  private readonly queue: Array<Entry> = []
  /** Entries before `queue[started]` have been started. */
  private started = 0
  private unappliedWrites = 0
  private pendingReads = 0
  private closing = false
  private paused = false
  closed = false

  constructor(
    readonly socket: Socket,
    private readonly server: RespServerImpl
  ) {}

  onCommand(args: ReadonlyArray<Uint8Array>): void {
    if (this.closing) return
    const name = upper(args[0] ?? new Uint8Array())
    const local = LOCAL_COMMANDS.get(name)
    let kind: Entry["kind"]
    let immediate: RespValue | undefined
    if (args.length === 0) {
      kind = "error"
      immediate = err("empty command")
    } else if (local !== undefined) {
      kind = "local"
      if (local.arity > 0 ? args.length !== local.arity : args.length < -local.arity) {
        kind = "error"
        immediate = wrongArity(local.name)
      }
    } else {
      const checked = this.server.backend.check(args)
      if ("t" in checked) {
        kind = "error"
        immediate = checked
      } else kind = checked.kind
    }
    const entry: Entry = { args, kind, started: false, reply: undefined }
    this.queue.push(entry)
    if (immediate !== undefined) {
      entry.started = true
      this.complete(entry, immediate)
    }
    this.pump()
    if (this.queue.length > MAX_QUEUED && !this.paused) {
      this.paused = true
      this.socket.pause()
    }
  }

  /** Starts every command that may start now, in order, stopping at the first that must wait. */
  private pump(): void {
    while (this.started < this.queue.length) {
      const entry = this.queue[this.started]!
      if (!entry.started) {
        if (entry.kind === "write" && this.pendingReads > 0) return
        if (entry.kind === "write" && this.unappliedWrites > 0 && !this.server.backend.writesInOrder) return
        if (entry.kind === "read" && this.unappliedWrites > 0) return
        // A connection's own commands (HELLO changes how later replies are encoded) run once all before are done.
        if (entry.kind === "local" && this.queue[0] !== entry) return
        this.start(entry)
      }
      this.started++
    }
  }

  private start(entry: Entry): void {
    entry.started = true
    const backend = this.server.backend
    if (entry.kind === "write") {
      this.unappliedWrites++
      backend.write(entry.args, (reply) => {
        this.unappliedWrites--
        this.complete(entry, reply)
      })
    } else if (entry.kind === "read") {
      this.pendingReads++
      backend.read(entry.args, (reply) => {
        this.pendingReads--
        this.complete(entry, reply)
      })
    } else if (entry.kind === "local") {
      this.complete(entry, this.local(entry.args))
    }
  }

  private complete(entry: Entry, reply: RespValue): void {
    if (this.closed) return
    const out: Array<Uint8Array> = []
    encodeResp(reply, this.protocol, out)
    entry.reply = out
    if (this.queue[0] === entry) this.server.markReady(this)
    // A finished write or read may let the commands that waited for it start.
    if (entry.kind === "write" || entry.kind === "read") this.pump()
  }

  /** Moves the replies now at the head of the queue into `out`; true when the connection is to close after. */
  drain(out: Array<Uint8Array>): boolean {
    let removed = 0
    while (removed < this.queue.length && this.queue[removed]!.reply !== undefined) {
      for (const part of this.queue[removed]!.reply!) out.push(part)
      removed++
    }
    this.queue.splice(0, removed)
    this.started -= removed
    if (this.paused && this.queue.length < MAX_QUEUED / 2) {
      this.paused = false
      this.socket.resume()
    }
    this.pump()
    return this.closing && this.queue.length === 0
  }

  private local(args: ReadonlyArray<Uint8Array>): RespValue {
    const name = upper(args[0]!)
    const arg = (i: number) => Buffer.from(args[i]!).toString("utf8")
    switch (name) {
      case "PING":
        if (args.length > 2) return wrongArity("ping")
        return args.length === 2 ? bulk(args[1]!) : simple("PONG")
      case "ECHO":
        return bulk(args[1]!)
      case "SELECT":
        return arg(1) === "0" ? OK : err("DB index is out of range")
      case "QUIT":
        this.closing = true
        return OK
      case "RESET":
        this.protocol = 2
        this.name = undefined
        return simple("RESET")
      case "HELLO":
        return this.hello(args)
      case "CLIENT":
        return this.client(args)
      case "INFO":
        return text(this.server.info(args.slice(1).map((a) => upper(a).toLowerCase())))
      case "COMMAND":
        return this.server.command(args)
      case "CONFIG":
        return this.config(args)
      default:
        return err(`unknown command '${name.toLowerCase()}'`)
    }
  }

  private hello(args: ReadonlyArray<Uint8Array>): RespValue {
    let protocol = this.protocol
    let i = 1
    if (args.length > 1) {
      const version = Buffer.from(args[1]!).toString("latin1")
      if (version !== "2" && version !== "3") {
        return /^\d+$/.test(version)
          ? error("NOPROTO", "unsupported protocol version")
          : err("Protocol version is not an integer or out of range")
      }
      protocol = version === "3" ? 3 : 2
      i = 2
    }
    while (i < args.length) {
      const option = upper(args[i]!)
      if (option === "AUTH" && i + 2 < args.length) {
        // No users here: the default user is the only one, with no password (as a Redis without requirepass).
        if (Buffer.from(args[i + 1]!).toString("utf8") !== "default") {
          return error("WRONGPASS", "invalid username-password pair or user is disabled.")
        }
        i += 3
      } else if (option === "SETNAME" && i + 1 < args.length) {
        this.name = Buffer.from(args[i + 1]!).toString("utf8")
        i += 2
      } else return err(`Syntax error in HELLO option '${Buffer.from(args[i]!).toString("utf8")}'`)
    }
    this.protocol = protocol
    return map([
      [text("server"), text("redis")],
      [text("version"), text(REDIS_COMPAT_VERSION)],
      [text("proto"), int(protocol)],
      [text("id"), int(this.id)],
      [text("mode"), text("standalone")],
      [text("role"), text("master")],
      [text("modules"), array([])]
    ])
  }

  private client(args: ReadonlyArray<Uint8Array>): RespValue {
    const sub = upper(args[1]!)
    switch (sub) {
      case "SETNAME": {
        if (args.length !== 3) return wrongArity("client|setname")
        const name = Buffer.from(args[2]!).toString("utf8")
        if (/[\s]/.test(name)) return err("Client names cannot contain spaces, newlines or special characters.")
        this.name = name === "" ? undefined : name
        return OK
      }
      case "GETNAME":
        return this.name === undefined ? NULL : text(this.name)
      case "ID":
        return int(this.id)
      case "SETINFO":
        return args.length === 4 ? OK : wrongArity("client|setinfo")
      case "INFO":
        return text(`${this.describe()}\n`)
      case "LIST":
        return text(`${this.describe()}\n`)
      default:
        return err(`unknown subcommand '${Buffer.from(args[1]!).toString("utf8")}'. Try CLIENT HELP.`)
    }
  }

  describe(): string {
    const remote = `${this.socket.remoteAddress ?? "?"}:${this.socket.remotePort ?? 0}`
    return `id=${this.id} addr=${remote} name=${this.name ?? ""} db=0 resp=${this.protocol} qbuf-pending=${this.queue.length}`
  }

  private config(args: ReadonlyArray<Uint8Array>): RespValue {
    const sub = upper(args[1]!)
    if (sub === "GET") {
      if (args.length < 3) return wrongArity("config|get")
      const patterns = args.slice(2).map((a) => Buffer.from(a).toString("utf8"))
      const found = CONFIG.filter(([name]) => patterns.some((p) => globMatch(p, name)))
      return map(found.map(([name, value]) => [text(name), text(value)] as const))
    }
    return err(`CONFIG ${sub} is not supported by a Reef replica (CONFIG GET is)`)
  }
}

/**
 * Reads a connection's bytes into commands (arrays of bulk strings; anything else is an empty command, which
 * is answered with an error) until a protocol error, after which it reads nothing more. Never throws:
 * redis-parser throws a RangeError on some malformed lengths (`*` then non-digits: found by fuzzing), which
 * inside the socket's data handler took the whole replica process down.
 */
export const makeRespReader = (
  onCommand: (args: ReadonlyArray<Buffer>) => void,
  onProtocolError: (message: string) => void
): ((chunk: Buffer) => void) => {
  let failed = false
  const fail = (message: string) => {
    if (failed) return
    failed = true
    onProtocolError(message)
  }
  const parser = new Parser({
    returnBuffers: true,
    returnReply: (reply: unknown) => {
      if (Array.isArray(reply) && reply.every((a) => Buffer.isBuffer(a))) onCommand(reply as Array<Buffer>)
      else onCommand([])
    },
    returnError: () => onCommand([]),
    returnFatalError: (error: Error) => fail(error.message)
  })
  return (chunk) => {
    if (failed) return
    try {
      parser.execute(chunk)
    } catch (error) {
      fail(`unreadable input (${(error as Error).message})`)
    }
  }
}

class RespServerImpl {
  private readonly connections = new Set<Connection>()
  private readonly ready = new Set<Connection>()
  private flushScheduled = false
  readonly startedMs = Date.now()
  /** The bound port (INFO's tcp_port). */
  port = 0

  constructor(
    readonly backend: RespBackend,
    private readonly options: RespServerOptions
  ) {}

  accept(socket: Socket): void {
    socket.setNoDelay(true)
    const connection = new Connection(socket, this)
    this.connections.add(connection)
    const read = makeRespReader(
      (args) => connection.onCommand(args),
      (message) => {
        // Not RESP (an inline command typed by hand, or garbage): say so, then close, as Redis does.
        socket.end(`-ERR Protocol error: ${message.replace(/[\r\n]+/g, " ")}; send commands as RESP arrays\r\n`)
        connection.closed = true
      }
    )
    socket.on("data", (chunk: Buffer) => {
      if (!connection.closed) read(chunk)
    })
    const gone = () => {
      connection.closed = true
      this.connections.delete(connection)
      this.ready.delete(connection)
    }
    socket.on("close", gone)
    socket.on("error", gone)
  }

  /** The connection has replies to write: all such are flushed once at the end of this turn. */
  markReady(connection: Connection): void {
    this.ready.add(connection)
    if (!this.flushScheduled) {
      this.flushScheduled = true
      setImmediate(this.flush)
    }
  }

  private readonly flush = () => {
    this.flushScheduled = false
    const ready = [...this.ready]
    this.ready.clear()
    for (const connection of ready) {
      if (connection.closed) continue
      const out: Array<Uint8Array> = []
      const close = connection.drain(out)
      if (out.length > 0) connection.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out))
      if (close) {
        connection.closed = true
        connection.socket.end()
      }
    }
  }

  info(sections: ReadonlyArray<string>): string {
    const all = sections.length === 0 || sections.some((s) => s === "all" || s === "everything" || s === "default")
    const want = (s: string) => all || sections.includes(s)
    const lines: Array<string> = []
    if (want("server")) {
      lines.push(
        "# Server",
        `redis_version:${REDIS_COMPAT_VERSION}`,
        "redis_mode:standalone",
        `process_id:${process.pid}`,
        `tcp_port:${this.port}`,
        `uptime_in_seconds:${Math.floor((Date.now() - this.startedMs) / 1000)}`,
        "reef_role:replica",
        `reef_replica:${this.options.replicaId}`,
        `reef_group:${this.options.group}`,
        `reef_backend:${this.backend.describe}`,
        ""
      )
    }
    if (want("clients")) lines.push("# Clients", `connected_clients:${this.connections.size}`, "")
    if (want("replication")) lines.push("# Replication", "role:master", "connected_slaves:0", "")
    return lines.join("\r\n")
  }

  command(args: ReadonlyArray<Uint8Array>): RespValue {
    const every = new Map([...this.backend.commands, ...LOCAL_COMMANDS])
    const info = (spec: CommandSpec): RespValue =>
      array([
        text(spec.name),
        int(spec.arity),
        array(spec.flags.map(simple)),
        int(spec.keys[0]),
        int(spec.keys[1]),
        int(spec.keys[2])
      ])
    if (args.length === 1) return array([...every.values()].map(info))
    const sub = upper(args[1]!)
    const named = args.slice(2).map((a) => every.get(upper(a)))
    switch (sub) {
      case "COUNT":
        return int(every.size)
      case "INFO":
        return array(named.map((spec) => (spec === undefined ? NULL : info(spec))))
      case "DOCS":
        return map(
          (args.length === 2 ? [...every.values()] : named.filter((s): s is CommandSpec => s !== undefined)).map(
            (spec) => [text(spec.name), map([[text("summary"), text(`${spec.kind} command`)]])] as const
          )
        )
      default:
        return err(`unknown subcommand '${Buffer.from(args[1]!).toString("utf8")}'. Try COMMAND HELP.`)
    }
  }

  closeAll(): void {
    for (const connection of this.connections) connection.socket.destroy()
  }
}

/** Listens for RESP clients; resolves once bound. */
export const startRespServer = (options: RespServerOptions): Promise<RespServer> => {
  const impl = new RespServerImpl(options.backend, options)
  const server: Server = createServer((socket) => impl.accept(socket))
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, options.host, () => {
      server.off("error", reject)
      const bound = server.address()
      const port = typeof bound === "object" && bound !== null ? bound.port : options.port
      const host = options.host.includes(":") ? `[${options.host}]` : options.host
      impl.port = port
      resolve({
        address: `${host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            impl.closeAll()
          })
      })
    })
  })
}
