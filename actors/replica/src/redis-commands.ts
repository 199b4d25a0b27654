/**
 * Redis string commands over Reef's own KV state (kv-state.ts): what a RESP client gets from a replica without
 * `--app redis`. Pure: the RESP server checks a command here before proposing it, every replica applies a
 * decided write here in the log's order, and a read evaluates here once its read barrier is applied.
 *
 * A key is a Reef KV key, so it must be UTF-8 (the gRPC API's keys are strings); a value is any bytes. Errors
 * are worded as Redis words them, so clients and tools that match on them behave. A write's syntax is checked
 * before it is proposed; what depends on the state (an INCR of a value that is not an integer) is decided when
 * it is applied, identically on every replica.
 */
import type { KvStateData } from "./kv-state.js"
import { array, bulk, err, int, NULL, OK, type RespValue } from "./resp-value.js"

/** How a command reaches the state: through consensus, behind a read barrier, or not at all. */
export type CommandKind = "write" | "read" | "local"

export interface CommandSpec {
  readonly name: string
  /** Redis's convention: N means exactly N arguments with the name, -N at least N. */
  readonly arity: number
  readonly kind: CommandKind
  /** COMMAND's flags. */
  readonly flags: ReadonlyArray<string>
  /** First key, last key (-1: the last argument) and step, as COMMAND reports them; 0 when none. */
  readonly keys: readonly [number, number, number]
}

const spec = (name: string, arity: number, kind: CommandKind, keys: readonly [number, number, number] = [1, 1, 1]) => {
  const flags = kind === "write" ? ["write", "denyoom"] : kind === "read" ? ["readonly", "fast"] : ["fast"]
  return [name, { name: name.toLowerCase(), arity, kind, flags, keys }] as const
}

/** Every command a replica with Reef's own KV state answers, by upper-case name. */
export const KV_COMMANDS: ReadonlyMap<string, CommandSpec> = new Map([
  spec("GET", 2, "read"),
  spec("MGET", -2, "read", [1, -1, 1]),
  spec("EXISTS", -2, "read", [1, -1, 1]),
  spec("STRLEN", 2, "read"),
  spec("DBSIZE", 1, "read", [0, 0, 0]),
  spec("SET", -3, "write"),
  spec("SETNX", 3, "write"),
  spec("GETSET", 3, "write"),
  spec("MSET", -3, "write", [1, -1, 2]),
  spec("DEL", -2, "write", [1, -1, 1]),
  spec("INCR", 2, "write"),
  spec("DECR", 2, "write"),
  spec("INCRBY", 3, "write"),
  spec("DECRBY", 3, "write"),
  spec("APPEND", 3, "write"),
  spec("PING", -1, "local", [0, 0, 0]),
  spec("ECHO", 2, "local", [0, 0, 0]),
  spec("HELLO", -1, "local", [0, 0, 0]),
  spec("SELECT", 2, "local", [0, 0, 0]),
  spec("QUIT", -1, "local", [0, 0, 0]),
  spec("RESET", 1, "local", [0, 0, 0]),
  spec("CLIENT", -2, "local", [0, 0, 0]),
  spec("INFO", -1, "local", [0, 0, 0]),
  spec("COMMAND", -1, "local", [0, 0, 0]),
  spec("CONFIG", -2, "local", [0, 0, 0])
])

const decoder = new TextDecoder("utf-8", { fatal: true })

/** Upper-case ASCII of an argument (command names and options). */
export const upper = (arg: Uint8Array): string => Buffer.from(arg).toString("latin1").toUpperCase()

const show = (arg: Uint8Array) => Buffer.from(arg).toString("utf8")

export const unknownCommand = (args: ReadonlyArray<Uint8Array>): RespValue =>
  err(
    `unknown command '${show(args[0] ?? new Uint8Array())}', with args beginning with: ${args
      .slice(1, 20)
      .map((a) => `'${show(a).slice(0, 128)}' `)
      .join("")}`
  )

export const wrongArity = (name: string): RespValue => err(`wrong number of arguments for '${name}' command`)

const SYNTAX = err("syntax error")
const NOT_INTEGER = err("value is not an integer or out of range")
const OVERFLOW = err("increment or decrement would overflow")
const MIN = -(2n ** 63n)
const MAX = 2n ** 63n - 1n

/** A key as Reef stores it, or why it cannot be one. */
export const keyOf = (arg: Uint8Array, maxKeyBytes: number): string | RespValue => {
  if (arg.byteLength > maxKeyBytes)
    return err(`key is ${arg.byteLength} bytes, more than this replica's ${maxKeyBytes}`)
  try {
    return decoder.decode(arg)
  } catch {
    return err("key is not valid UTF-8: Reef's KV keys are text (--app redis takes any bytes)")
  }
}

/** A signed 64-bit integer argument as Redis reads one (no spaces, no leading +, no leading zeros). */
const integerOf = (arg: Uint8Array): bigint | undefined => {
  const s = Buffer.from(arg).toString("latin1")
  if (!/^(0|-?[1-9][0-9]{0,18})$/.test(s)) return undefined
  const n = BigInt(s)
  return n < MIN || n > MAX ? undefined : n
}

export interface SetOptions {
  readonly condition: "always" | "nx" | "xx"
  readonly get: boolean
}

/** SET's options after the key and value: NX | XX, GET, KEEPTTL. Expiry is refused (no TTLs in this state). */
export const setOptions = (args: ReadonlyArray<Uint8Array>): SetOptions | RespValue => {
  let condition: SetOptions["condition"] = "always"
  let get = false
  for (const arg of args.slice(3)) {
    const option = upper(arg)
    if (option === "NX" || option === "XX") {
      if (condition !== "always") return SYNTAX
      condition = option === "NX" ? "nx" : "xx"
    } else if (option === "GET") get = true
    else if (option === "KEEPTTL") continue
    else if (["EX", "PX", "EXAT", "PXAT"].includes(option)) {
      return err("expiry is not supported with Reef's own KV state, which has no clock (use --app redis)")
    } else return SYNTAX
  }
  return { condition, get }
}

/**
 * Checks a command before anything is proposed: known, right number of arguments, syntax, keys and values
 * within the limits. Returns its spec, or the error to answer.
 */
export const checkCommand = (
  args: ReadonlyArray<Uint8Array>,
  limits: { readonly maxKeyBytes: number; readonly maxValueBytes: number }
): CommandSpec | RespValue => {
  const found = KV_COMMANDS.get(upper(args[0] ?? new Uint8Array()))
  if (found === undefined) return unknownCommand(args)
  if (found.arity > 0 ? args.length !== found.arity : args.length < -found.arity) return wrongArity(found.name)
  if (found.name === "mset" && args.length % 2 === 0) return wrongArity(found.name)
  if (found.name === "set") {
    const options = setOptions(args)
    if ("t" in options) return options
  }
  if (found.keys[0] > 0) {
    const last = found.keys[1] < 0 ? args.length + found.keys[1] : found.keys[1]
    for (let i = found.keys[0]; i <= last; i += found.keys[2]) {
      const key = keyOf(args[i]!, limits.maxKeyBytes)
      if (typeof key !== "string") return key
    }
  }
  if (found.kind === "write") {
    const values = args.slice(1).filter((_, i) => (found.name === "mset" ? i % 2 === 1 : i === 1))
    for (const value of values) {
      if (value.byteLength > limits.maxValueBytes) {
        return err(`value is ${value.byteLength} bytes, more than this replica's ${limits.maxValueBytes}`)
      }
    }
  }
  if ((found.name === "incrby" || found.name === "decrby") && integerOf(args[2]!) === undefined) return NOT_INTEGER
  return found
}

/** No limit at apply time: a decided command was checked by the replica that proposed it. */
const anyKey = (arg: Uint8Array): string | undefined => {
  const key = keyOf(arg, Number.MAX_SAFE_INTEGER)
  return typeof key === "string" ? key : undefined
}

const store = (state: KvStateData, key: string, value: Uint8Array) => {
  state.records.set(key, { value: new Uint8Array(value), version: (state.records.get(key)?.version ?? 0) + 1 })
}

const valueReply = (state: KvStateData, key: string): RespValue => {
  const record = state.records.get(key)
  return record === undefined ? NULL : bulk(record.value)
}

const incrementBy = (state: KvStateData, key: string, by: bigint): RespValue => {
  const current = state.records.get(key)
  const base = current === undefined ? 0n : integerOf(current.value)
  if (base === undefined) return NOT_INTEGER
  const next = base + by
  if (next < MIN || next > MAX) return OVERFLOW
  store(state, key, Buffer.from(next.toString(), "latin1"))
  return int(next)
}

/**
 * Applies one decided write to `state` and returns its reply; every replica gets the same one. A command
 * this replica would have refused at the front (a malformed value from elsewhere) gets an error and changes
 * nothing.
 */
export const applyRedisWrite = (state: KvStateData, args: ReadonlyArray<Uint8Array>): RespValue => {
  const checked = checkCommand(args, { maxKeyBytes: Number.MAX_SAFE_INTEGER, maxValueBytes: Number.MAX_SAFE_INTEGER })
  if ("t" in checked) return checked
  if (checked.kind !== "write") return err(`'${checked.name}' is not a write`)
  const key = anyKey(args[1]!)!
  switch (checked.name) {
    case "set": {
      const options = setOptions(args) as SetOptions
      const previous = state.records.get(key)
      const proceed = options.condition === "always" || (options.condition === "nx") === (previous === undefined)
      if (proceed) store(state, key, args[2]!)
      if (options.get) return previous === undefined ? NULL : bulk(previous.value)
      return proceed ? OK : NULL
    }
    case "setnx":
      if (state.records.has(key)) return int(0)
      store(state, key, args[2]!)
      return int(1)
    case "getset": {
      const previous = valueReply(state, key)
      store(state, key, args[2]!)
      return previous
    }
    case "mset":
      for (let i = 1; i + 1 < args.length; i += 2) store(state, anyKey(args[i]!)!, args[i + 1]!)
      return OK
    case "del": {
      let removed = 0
      for (const arg of args.slice(1)) if (state.records.delete(anyKey(arg)!)) removed++
      return int(removed)
    }
    case "incr":
      return incrementBy(state, key, 1n)
    case "decr":
      return incrementBy(state, key, -1n)
    case "incrby":
      return incrementBy(state, key, integerOf(args[2]!)!)
    case "decrby":
      return incrementBy(state, key, -integerOf(args[2]!)!)
    case "append": {
      const current = state.records.get(key)?.value ?? new Uint8Array()
      const next = Buffer.concat([current, args[2]!])
      store(state, key, next)
      return int(next.byteLength)
    }
    default:
      return err(`'${checked.name}' is not a write`)
  }
}

/** Evaluates a read against `state` (after its read barrier). */
export const readRedis = (state: KvStateData, args: ReadonlyArray<Uint8Array>): RespValue => {
  const name = upper(args[0]!)
  const keys = () => args.slice(1).map((a) => anyKey(a)!)
  switch (name) {
    case "GET":
      return valueReply(state, keys()[0]!)
    case "MGET":
      return array(keys().map((key) => valueReply(state, key)))
    case "EXISTS":
      return int(keys().filter((key) => state.records.has(key)).length)
    case "STRLEN":
      return int(state.records.get(keys()[0]!)?.value.byteLength ?? 0)
    case "DBSIZE":
      return int(state.records.size)
    default:
      return err(`'${name.toLowerCase()}' is not a read`)
  }
}
