/**
 * `--app redis`, the POPUC paper's design: the replica fronts its own local redis-server. Every write command is
 * ordered through consensus and sent to each replica's Redis in decision order over one connection (Redis runs
 * a connection's commands in order, so the applier never waits); a consistent read waits for a read barrier and
 * then goes down the same connection, behind every write applied before the barrier.
 *
 * Which commands are writes is Redis's own word (COMMAND's flags, read from the local server at start). What
 * would make replicas differ is refused or made deterministic before it is proposed:
 * - relative expiry (SET EX/PX, SETEX, PSETEX, EXPIRE, PEXPIRE) becomes an absolute time chosen by the proposing
 *   replica, so every Redis expires the key at the same moment; other relative TTLs are refused;
 * - writes whose effect is random (SPOP, SRANDMEMBER's write cousins: Redis's `nondeterministic_output` tip on
 *   a write), `*` stream ids, scripts and functions (EVAL may call TIME or RANDOMKEY), transactions, blocking
 *   commands, pub/sub and administration are refused with an -ERR that says why.
 * Reads with a random answer (RANDOMKEY, SRANDMEMBER) are served: they change nothing.
 *
 * Snapshots (a joiner too far behind for the decision log): a Lua script on the same connection returns every
 * key's DUMP and PTTL at that point of the log; a joiner FLUSHALLs its Redis and RESTOREs them, before any later
 * write. Replies are parsed with redis-parser: a simple-string reply other than a write's OK reaches the client
 * as a bulk string, and RESP3 clients get Redis's maps as flat arrays.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { connect, createServer, type Socket } from "node:net"
import { HandlerError } from "@reef/kernel"
import type { KvEntry } from "@reef/proto"
import Parser from "redis-parser"
import type { Proposer } from "./proposer.js"
import type { CommandSpec } from "./redis-commands.js"
import { unknownCommand, upper, wrongArity } from "./redis-commands.js"
import { proposedArgs, respErrorOf } from "./redis-kv.js"
import type { ReplicatedApp } from "./replicated-app.js"
import type { RespBackend } from "./resp-server.js"
import { array, bulk, err, int, NULL, OK, type RespValue } from "./resp-value.js"

/** One connection to a redis-server; commands are answered in the order sent. */
export class RedisLink {
  private readonly waiting: Array<(reply: RespValue) => void> = []
  private closed = false

  private constructor(private readonly socket: Socket) {
    const parser = new Parser({
      returnBuffers: true,
      returnReply: (reply: unknown) => this.waiting.shift()?.(respOf(reply)),
      returnError: (error: Error) => this.waiting.shift()?.({ t: "error", s: error.message }),
      returnFatalError: (error: Error) => this.fail(`protocol error from redis-server: ${error.message}`)
    })
    socket.setNoDelay(true)
    socket.on("data", (chunk: Buffer) => parser.execute(chunk))
    socket.on("close", () => this.fail("the connection to redis-server closed"))
    socket.on("error", (error) => this.fail(`redis-server: ${error.message}`))
  }

  static connect(port: number, host = "127.0.0.1"): Promise<RedisLink> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host)
      socket.once("connect", () => {
        socket.off("error", reject)
        resolve(new RedisLink(socket))
      })
      socket.once("error", reject)
    })
  }

  send(args: ReadonlyArray<Uint8Array>, reply: (value: RespValue) => void): void {
    if (this.closed) {
      reply(err("the replica lost its redis-server"))
      return
    }
    const parts: Array<Uint8Array> = [Buffer.from(`*${args.length}\r\n`)]
    for (const arg of args) parts.push(Buffer.from(`$${arg.byteLength}\r\n`), arg, Buffer.from("\r\n"))
    this.waiting.push(reply)
    this.socket.write(Buffer.concat(parts))
  }

  call(...args: Array<string | Uint8Array>): Promise<RespValue> {
    return new Promise((resolve) =>
      this.send(
        args.map((a) => (typeof a === "string" ? Buffer.from(a) : a)),
        resolve
      )
    )
  }

  private fail(reason: string): void {
    if (this.closed) return
    this.closed = true
    for (const waiter of this.waiting.splice(0)) waiter(err(reason))
  }

  close(): void {
    this.closed = true
    this.socket.destroy()
  }
}

/** redis-parser's reply as a RespValue (simple strings arrive as buffers, like bulk ones). */
const respOf = (reply: unknown): RespValue => {
  if (reply === null || reply === undefined) return NULL
  if (Buffer.isBuffer(reply)) return bulk(reply)
  if (typeof reply === "number") return int(reply)
  if (typeof reply === "string") return bulk(Buffer.from(reply))
  if (Array.isArray(reply)) return array(reply.map(respOf))
  if (reply instanceof Error) return { t: "error", s: reply.message }
  return err(`unexpected reply from redis-server: ${String(reply)}`)
}

const isOk = (value: RespValue) =>
  value.t === "bulk" && value.b.byteLength === 2 && Buffer.from(value.b).toString() === "OK"

/** A local redis-server this replica started; it dies with the replica, even a SIGKILLed one. */
export interface LocalRedis {
  readonly port: number
  readonly stop: () => Promise<void>
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * Starts `redis-server` on a free port with no persistence (the replicated log is the durable part) and the
 * DEBUG command enabled locally (DEBUG DIGEST compares replicas). A shell in between kills it when its stdin
 * closes, which it does when this process dies however it dies.
 */
export const startLocalRedis = async (binary = "redis-server"): Promise<LocalRedis> => {
  const port = await freePort()
  const args = [
    ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    ...["--enable-debug-command", "local", "--protected-mode", "no", "--loglevel", "warning"]
  ]
  const child: ChildProcess = spawn(
    "sh",
    ["-c", `"$0" "$@" & r=$!; trap 'kill $r 2>/dev/null' EXIT; read _ || true`, binary, ...args],
    { stdio: ["pipe", "ignore", "inherit"] }
  )
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  // A loaded machine can take seconds to start it: wait up to 60 s, or until it exits.
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      const link = await RedisLink.connect(port)
      const pong = await link.call("PING")
      link.close()
      if (pong.t !== "error") break
    } catch (error) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill("SIGKILL")
        throw new Error(`redis-server on port ${port} did not start: ${(error as Error).message}`)
      }
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  return {
    port,
    stop: async () => {
      child.stdin?.end()
      await exited
    }
  }
}

/** What a RESP client may send, as Redis's COMMAND describes it, with this replica's refusals. */
interface AppCommand extends CommandSpec {
  /** Why it is refused, when it is. */
  readonly refused?: string
}

const REFUSED_BY_NAME: ReadonlyMap<string, string> = new Map([
  ["EVAL", "scripts may call TIME or random commands; replicated Redis runs no scripts"],
  ["EVALSHA", "scripts may call TIME or random commands; replicated Redis runs no scripts"],
  ["EVAL_RO", "replicated Redis runs no scripts"],
  ["EVALSHA_RO", "replicated Redis runs no scripts"],
  ["FCALL", "replicated Redis runs no functions"],
  ["FCALL_RO", "replicated Redis runs no functions"],
  ["FUNCTION", "replicated Redis runs no functions"],
  ["SCRIPT", "replicated Redis runs no scripts"],
  ["MULTI", "transactions are not replicated yet: send the commands one by one"],
  ["EXEC", "transactions are not replicated yet"],
  ["WATCH", "transactions are not replicated yet"],
  ["UNWATCH", "transactions are not replicated yet"],
  ["DISCARD", "transactions are not replicated yet"],
  ["MOVE", "a replica serves database 0 only"],
  ["SWAPDB", "a replica serves database 0 only"],
  ["COPY", "COPY may name another database; use DUMP and RESTORE"],
  ["MIGRATE", "keys stay in the replicated group"],
  ["GETEX", "GETEX's expiry is relative to each replica's clock; use EXPIREAT or PEXPIREAT"],
  ["SPOP", "SPOP removes random members: the replicas would differ"],
  ["SORT", "SORT ... STORE may depend on other keys by pattern; use SORT_RO"]
])

const classify = (name: string, flags: ReadonlyArray<string>, tips: ReadonlyArray<string>): AppCommand["refused"] => {
  const byName = REFUSED_BY_NAME.get(name)
  if (byName !== undefined) return byName
  if (flags.includes("blocking")) return "blocking commands are not replicated"
  if (flags.includes("pubsub")) return "pub/sub is not replicated"
  if (flags.includes("admin") || flags.includes("noscript")) return "administrative commands are not served"
  // XADD is marked so for its '*' ids, which deterministicArgs refuses; with an explicit id it is deterministic.
  if (flags.includes("write") && tips.includes("nondeterministic_output") && name !== "XADD") {
    return "its effect is random: the replicas would differ"
  }
  return undefined
}

/**
 * COMMAND's reply as a table: name, arity, flags, first/last/step key, tips and subcommands (Redis 7). A
 * container's subcommands (XGROUP CREATE, OBJECT ENCODING) are entered as `XGROUP|CREATE`: their flags are theirs.
 */
const commandTable = (reply: RespValue): Map<string, AppCommand> => {
  const table = new Map<string, AppCommand>()
  const text = (v: RespValue | undefined) => (v?.t === "bulk" ? Buffer.from(v.b).toString() : "")
  const num = (v: RespValue | undefined) => (v?.t === "int" ? Number(v.n) : 0)
  const enter = (entry: RespValue) => {
    if (entry.t !== "array") return
    const [name, arity, flagList, first, last, step, , tipList, , subcommands] = entry.items
    const flags = flagList?.t === "array" ? flagList.items.map(text) : []
    const tips = tipList?.t === "array" ? tipList.items.map(text) : []
    const upperName = text(name).toUpperCase()
    const refused = classify(upperName.split("|")[0]!, flags, tips)
    table.set(upperName, {
      name: text(name).toLowerCase(),
      arity: num(arity),
      kind: flags.includes("write") ? "write" : "read",
      flags,
      keys: [num(first), num(last), num(step)],
      ...(refused === undefined ? {} : { refused })
    })
    if (subcommands?.t === "array") for (const sub of subcommands.items) enter(sub)
  }
  if (reply.t === "array") for (const entry of reply.items) enter(entry)
  return table
}

/** Makes a relative expiry absolute (PXAT / PEXPIREAT at `nowMs` + the delay), or says why it cannot. */
export const deterministicArgs = (
  args: ReadonlyArray<Uint8Array>,
  nowMs: number
): ReadonlyArray<Uint8Array> | RespValue => {
  const name = upper(args[0]!)
  const n = (arg: Uint8Array | undefined) => {
    const s = arg === undefined ? "" : Buffer.from(arg).toString("latin1")
    return /^-?\d+$/.test(s) ? Number(s) : Number.NaN
  }
  const at = (delayMs: number) => Buffer.from(String(nowMs + delayMs))
  const invalid = err("invalid expire time")
  switch (name) {
    case "SET": {
      const out = [...args]
      for (let i = 3; i < out.length; i++) {
        const option = upper(out[i]!)
        if (option === "EX" || option === "PX") {
          const amount = n(out[i + 1])
          if (!(amount > 0)) return err(`invalid expire time in 'set' command`)
          out[i] = Buffer.from("PXAT")
          out[i + 1] = at(option === "EX" ? amount * 1000 : amount)
          i++
        }
      }
      return out
    }
    case "SETEX":
    case "PSETEX": {
      const amount = n(args[2])
      if (!(amount > 0)) return err(`invalid expire time in '${name.toLowerCase()}' command`)
      return [
        Buffer.from("SET"),
        args[1]!,
        args[3]!,
        Buffer.from("PXAT"),
        at(name === "SETEX" ? amount * 1000 : amount)
      ]
    }
    case "EXPIRE":
    case "PEXPIRE": {
      const amount = n(args[2])
      if (Number.isNaN(amount)) return invalid
      return [Buffer.from("PEXPIREAT"), args[1]!, at(name === "EXPIRE" ? amount * 1000 : amount), ...args.slice(3)]
    }
    case "RESTORE": {
      const ttl = n(args[2])
      if (ttl !== 0 && !args.slice(4).some((a) => upper(a) === "ABSTTL")) {
        return err("RESTORE with a relative TTL: pass ABSTTL (an absolute time) or 0")
      }
      return args
    }
    case "XADD": {
      // XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] <* | id> field value ...
      let i = 2
      while (i < args.length) {
        const option = upper(args[i]!)
        if (option === "NOMKSTREAM") i++
        else if (option === "MAXLEN" || option === "MINID") {
          i++
          if (["=", "~"].includes(Buffer.from(args[i] ?? new Uint8Array()).toString())) i++
          i++
          if (upper(args[i] ?? new Uint8Array()) === "LIMIT") i += 2
        } else break
      }
      const id = Buffer.from(args[i] ?? new Uint8Array()).toString("latin1")
      if (id === "*" || id.endsWith("-*")) {
        return err("XADD with an automatic id ('*') differs per replica: give the id explicitly")
      }
      return args
    }
    default:
      return args
  }
}

export interface RedisAppOptions {
  /** A redis-server to front (its contents are replaced: FLUSHALL at start); else one is started. */
  readonly port?: number
  readonly host?: string
  readonly binary?: string
}

export interface RunningRedisApp {
  readonly app: ReplicatedApp
  readonly link: RedisLink
  readonly commands: ReadonlyMap<string, AppCommand>
  /** `host:port` of the local redis-server (to compare replicas' contents, DEBUG DIGEST). */
  readonly address: string
  readonly version: string
  readonly close: () => Promise<void>
}

const CAPTURE_SCRIPT = `local keys = redis.call('KEYS', '*')
local out = {}
for _, k in ipairs(keys) do
  out[#out + 1] = k
  out[#out + 1] = redis.call('DUMP', k)
  out[#out + 1] = redis.call('PTTL', k)
end
return out`

/** Starts (or connects to) the local redis-server and empties it: the replicated log is the source of truth. */
export const startRedisApp = async (options: RedisAppOptions, nowMs: () => number): Promise<RunningRedisApp> => {
  const local = options.port === undefined ? await startLocalRedis(options.binary) : undefined
  const port = local?.port ?? options.port!
  const host = options.host ?? "127.0.0.1"
  const link = await RedisLink.connect(port, host)
  const flushed = await link.call("FLUSHALL")
  if (flushed.t === "error") throw new Error(`redis-server at ${host}:${port}: FLUSHALL failed: ${flushed.s}`)
  const info = await link.call("INFO", "server")
  const version = info.t === "bulk" ? (/redis_version:(\S+)/.exec(Buffer.from(info.b).toString())?.[1] ?? "?") : "?"
  const commands = commandTable(await link.call("COMMAND"))
  if (commands.size === 0) throw new Error(`redis-server at ${host}:${port} did not describe its commands (COMMAND)`)
  const app: ReplicatedApp = {
    apply: (args) =>
      new Promise((resolve) =>
        link.send(args, (reply) => resolve(upper(args[0]!) !== "GET" && isOk(reply) ? OK : reply))
      ),
    capture: () =>
      link.call("EVAL", CAPTURE_SCRIPT, "0").then((reply) => {
        if (reply.t !== "array") throw new Error(`capturing redis-server's contents failed: ${JSON.stringify(reply)}`)
        const entries: Array<KvEntry> = []
        const now = nowMs()
        for (let i = 0; i + 2 < reply.items.length; i += 3) {
          const [key, dump, pttl] = [reply.items[i]!, reply.items[i + 1]!, reply.items[i + 2]!]
          if (key.t !== "bulk" || dump.t !== "bulk") continue
          const ttl = pttl.t === "int" ? Number(pttl.n) : -1
          // The key's bytes in base64 (a KvEntry key is text); the version field carries an absolute expiry.
          entries.push({
            key: Buffer.from(key.b).toString("base64"),
            value: Buffer.from(dump.b),
            version: ttl > 0 ? now + ttl : 0
          })
        }
        return entries
      }),
    restore: (entries) => {
      link.send([Buffer.from("FLUSHALL")], () => {})
      for (const entry of entries) {
        const ttl = Buffer.from(String(entry.version))
        link.send(
          [
            Buffer.from("RESTORE"),
            Buffer.from(entry.key, "base64"),
            ttl,
            entry.value,
            Buffer.from("REPLACE"),
            Buffer.from("ABSTTL")
          ],
          () => {}
        )
      }
    }
  }
  return {
    app,
    link,
    commands,
    address: `${host}:${port}`,
    version,
    close: async () => {
      link.close()
      await local?.stop()
    }
  }
}

/** Checks a command for the replicated Redis: known, right arity, not refused; writes made deterministic. */
export const checkAppCommand = (
  commands: ReadonlyMap<string, AppCommand>,
  args: ReadonlyArray<Uint8Array>
): AppCommand | RespValue => {
  const name = upper(args[0] ?? new Uint8Array())
  const container = commands.get(name)
  if (container === undefined) return unknownCommand(args)
  // A container's subcommand has its own flags (XGROUP CREATE writes, XINFO STREAM reads).
  const sub = args.length > 1 ? commands.get(`${name}|${upper(args[1]!)}`) : undefined
  const found = sub ?? container
  if (found.arity > 0 ? args.length !== found.arity : args.length < -found.arity) return wrongArity(found.name)
  if (found.refused !== undefined) return err(`'${found.name}' is refused by replicated Redis: ${found.refused}`)
  if (sub === undefined && [...commands.keys()].some((k) => k.startsWith(`${name}|`))) {
    return err(
      `unknown subcommand '${args[1] === undefined ? "" : Buffer.from(args[1]).toString()}' of '${found.name}'`
    )
  }
  return found
}

/** The RESP server's backend over the local redis-server: the replica's proposer and read barrier, as for gRPC. */
export const appBackend = <Span>(deps: {
  readonly running: RunningRedisApp
  readonly proposer: Proposer<Span>
  readonly engines: number
  readonly nowMs: () => number
}): RespBackend => ({
  describe: `redis-server ${deps.running.version} at ${deps.running.address} (--app redis)`,
  commands: deps.running.commands,
  writesInOrder: deps.engines === 1,
  check: (args) => {
    const checked = checkAppCommand(deps.running.commands, args)
    if ("t" in checked || checked.kind !== "write") return checked
    const deterministic = deterministicArgs(args, deps.nowMs())
    return "t" in deterministic ? deterministic : checked
  },
  write: (args, done) => {
    const deterministic = deterministicArgs(args, deps.nowMs())
    if ("t" in deterministic) return done(deterministic)
    deps.proposer.submit({ $case: "redis", value: { args: proposedArgs(deterministic) } }, (outcome) => {
      if (outcome instanceof HandlerError) done(respErrorOf(outcome, deps.proposer.isServing))
      else if (outcome.result._tag === "RedisApplied") void outcome.result.reply.then(done)
      else
        done(outcome.result._tag === "Redis" ? outcome.result.reply : err(`unexpected result ${outcome.result._tag}`))
    })
  },
  read: (args, done) => {
    deps.proposer.awaitReadPoint((point) => {
      if (point instanceof HandlerError) done(respErrorOf(point, deps.proposer.isServing))
      else deps.running.link.send(args, done)
    })
  }
})
