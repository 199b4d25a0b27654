/**
 * Redis string commands over Reef's KV state, checked against what Redis 7 answers for the same commands (the
 * replies below are redis-server's, as redis-cli shows them).
 */
import { describe, expect, it } from "vitest"
import { emptyKvState } from "./kv-state.js"
import { applyRedisWrite, checkCommand, readRedis } from "./redis-commands.js"
import { type RespValue, respBytes } from "./resp-value.js"

const args = (...words: Array<string>) => words.map((w) => Buffer.from(w))
const limits = { maxKeyBytes: 16, maxValueBytes: 32 }
const wire = (value: RespValue) => respBytes(value).toString("latin1")

const session = () => {
  const state = emptyKvState()
  const write = (...words: Array<string>) => wire(applyRedisWrite(state, args(...words)))
  const read = (...words: Array<string>) => wire(readRedis(state, args(...words)))
  return { state, write, read }
}

describe("Redis writes applied to the KV state", () => {
  it("SET with NX, XX and GET answers as Redis does", () => {
    const { write, read } = session()
    expect(write("SET", "k", "1")).toBe("+OK\r\n")
    expect(write("SET", "k", "2", "NX")).toBe("$-1\r\n")
    expect(write("SET", "k", "3", "XX", "GET")).toBe("$1\r\n1\r\n")
    expect(write("SET", "n", "1", "XX")).toBe("$-1\r\n")
    expect(write("SET", "n", "1", "nx", "get")).toBe("$-1\r\n")
    expect(read("MGET", "k", "n", "none")).toBe("*3\r\n$1\r\n3\r\n$1\r\n1\r\n$-1\r\n")
  })

  it("INCR, INCRBY, DECR, DECRBY keep a signed 64-bit integer and refuse anything else", () => {
    const { write, read } = session()
    expect(write("INCR", "c")).toBe(":1\r\n")
    expect(write("INCRBY", "c", "41")).toBe(":42\r\n")
    expect(write("DECRBY", "c", "50")).toBe(":-8\r\n")
    expect(write("DECR", "c")).toBe(":-9\r\n")
    expect(read("GET", "c")).toBe("$2\r\n-9\r\n")
    write("SET", "big", "9223372036854775807")
    expect(write("INCR", "big")).toBe("-ERR increment or decrement would overflow\r\n")
    write("SET", "s", "01")
    expect(write("INCR", "s")).toBe("-ERR value is not an integer or out of range\r\n")
    expect(read("GET", "s")).toBe("$2\r\n01\r\n")
  })

  it("SETNX, GETSET, APPEND, STRLEN, DEL, EXISTS and DBSIZE", () => {
    const { write, read } = session()
    expect(write("SETNX", "a", "x")).toBe(":1\r\n")
    expect(write("SETNX", "a", "y")).toBe(":0\r\n")
    expect(write("GETSET", "a", "z")).toBe("$1\r\nx\r\n")
    expect(write("APPEND", "a", "yz")).toBe(":3\r\n")
    expect(read("STRLEN", "a")).toBe(":3\r\n")
    expect(write("MSET", "b", "1", "c", "2")).toBe("+OK\r\n")
    expect(read("EXISTS", "a", "a", "zz")).toBe(":2\r\n")
    expect(read("DBSIZE")).toBe(":3\r\n")
    expect(write("DEL", "a", "b", "zz")).toBe(":2\r\n")
    expect(read("DBSIZE")).toBe(":1\r\n")
  })

  it("counts each write in the key's version, as the gRPC API's writes do", () => {
    const { state, write } = session()
    write("SET", "v", "1")
    write("APPEND", "v", "2")
    write("INCR", "v")
    expect(state.records.get("v")).toEqual({ value: new Uint8Array(Buffer.from("13")), version: 3 })
  })
})

describe("checks before proposing", () => {
  const check = (...words: Array<string>) => {
    const checked = checkCommand(args(...words), limits)
    return "t" in checked ? wire(checked) : checked.kind
  }

  it("classifies commands and refuses unknown ones and wrong arities in Redis's words", () => {
    expect(check("get", "k")).toBe("read")
    expect(check("Set", "k", "v")).toBe("write")
    expect(check("HSET", "h", "f", "v")).toBe("-ERR unknown command 'HSET', with args beginning with: 'h' 'f' 'v' \r\n")
    expect(check("GET")).toBe("-ERR wrong number of arguments for 'get' command\r\n")
    expect(check("MSET", "a", "1", "b")).toBe("-ERR wrong number of arguments for 'mset' command\r\n")
  })

  it("refuses SET syntax errors, expiry, bad increments, oversized keys and values, non-UTF-8 keys", () => {
    expect(check("SET", "k", "v", "NX", "XX")).toBe("-ERR syntax error\r\n")
    expect(check("SET", "k", "v", "BOGUS")).toBe("-ERR syntax error\r\n")
    expect(check("SET", "k", "v", "EX", "10")).toMatch(/^-ERR expiry is not supported/)
    expect(check("INCRBY", "k", "1.5")).toBe("-ERR value is not an integer or out of range\r\n")
    expect(check("GET", "k".repeat(17))).toMatch(/^-ERR key is 17 bytes/)
    expect(check("SET", "k", "v".repeat(33))).toMatch(/^-ERR value is 33 bytes/)
    const checked = checkCommand([Buffer.from("GET"), Buffer.from([0xff, 0xfe])], limits)
    expect("t" in checked && wire(checked)).toMatch(/^-ERR key is not valid UTF-8/)
  })

  it("a decided write that its proposer should have refused changes nothing and answers an error", () => {
    const { state, write } = session()
    expect(write("SET", "k")).toBe("-ERR wrong number of arguments for 'set' command\r\n")
    expect(write("GET", "k")).toBe("-ERR 'get' is not a write\r\n")
    expect(state.records.size).toBe(0)
  })
})
