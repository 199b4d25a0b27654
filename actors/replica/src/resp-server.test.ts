/**
 * The connection side of the Redis endpoint over a backend that completes writes late and in any order: a
 * pipeline's commands take effect in the order sent and their replies come back in that order.
 */
import { connect } from "node:net"
import Parser from "redis-parser"
import { afterEach, describe, expect, it } from "vitest"
import type { CommandSpec } from "./redis-commands.js"
import { type RespServer, startRespServer } from "./resp-server.js"
import { array, type int, OK, text } from "./resp-value.js"

const spec = (name: string, kind: CommandSpec["kind"]): CommandSpec => ({
  name,
  arity: -1,
  kind,
  flags: [],
  keys: [0, 0, 0]
})

/**
 * Writes append their argument after a delay that shrinks, so later writes would finish first if let (a
 * backend whose writes are not applied in the order handed over).
 */
const lateBackend = (writesInOrder = false) => {
  const log: Array<string> = []
  let delay = 20
  return {
    log,
    backend: {
      describe: "test",
      writesInOrder,
      commands: new Map([
        ["ADD", spec("add", "write")],
        ["LOG", spec("log", "read")]
      ]),
      check: (args: ReadonlyArray<Uint8Array>) =>
        Buffer.from(args[0]!).toString().toUpperCase() === "ADD" ? spec("add", "write") : spec("log", "read"),
      write: (args: ReadonlyArray<Uint8Array>, done: (reply: ReturnType<typeof int>) => void) => {
        delay = Math.max(0, delay - 5)
        setTimeout(() => {
          log.push(Buffer.from(args[1]!).toString())
          done(OK)
        }, delay)
      },
      read: (_args: ReadonlyArray<Uint8Array>, done: (reply: ReturnType<typeof int>) => void) =>
        setImmediate(() => done(array(log.map(text))))
    }
  }
}

const servers: Array<RespServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const command = (...words: Array<string>) =>
  `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join("")}`

/** Sends `raw` at once and collects `count` replies (strings, arrays of strings, or Error messages). */
const exchange = (port: number, raw: string | Buffer, count: number) =>
  new Promise<Array<unknown>>((resolve, reject) => {
    const replies: Array<unknown> = []
    const socket = connect(port, "127.0.0.1")
    const parser = new Parser({
      returnReply: (reply) => {
        replies.push(reply)
        if (replies.length === count) {
          socket.end()
          resolve(replies)
        }
      },
      returnError: (error) => {
        replies.push(`error: ${error.message}`)
        if (replies.length === count) {
          socket.end()
          resolve(replies)
        }
      }
    })
    socket.on("data", (chunk) => parser.execute(chunk))
    socket.on("error", reject)
    socket.write(raw)
  })

describe("RESP server", () => {
  it("keeps a pipeline's order: a read sees the writes sent before it, never one sent after", async () => {
    const { backend } = lateBackend()
    const server = await startRespServer({
      host: "127.0.0.1",
      port: 0,
      backend,
      replicaId: "r1",
      group: "g",
      log: () => {}
    })
    servers.push(server)
    const raw = [
      command("ADD", "a"),
      command("ADD", "b"),
      command("LOG"),
      command("ADD", "c"),
      command("LOG"),
      command("PING")
    ].join("")
    expect(await exchange(server.port, raw, 6)).toEqual(["OK", "OK", ["a", "b"], "OK", ["a", "b", "c"], "PONG"])
  })

  it("answers its own commands, switches to RESP3 with HELLO 3, and refuses bad ones in Redis's words", async () => {
    const { backend } = lateBackend()
    const server = await startRespServer({
      host: "127.0.0.1",
      port: 0,
      backend,
      replicaId: "r1",
      group: "g",
      log: () => {}
    })
    servers.push(server)
    const replies = await exchange(
      server.port,
      [
        command("ECHO", "hi"),
        command("SELECT", "1"),
        command("CLIENT", "SETNAME", "me"),
        command("CLIENT", "GETNAME"),
        command("HELLO", "4"),
        command("PING", "a", "b")
      ].join(""),
      6
    )
    expect(replies).toEqual([
      "hi",
      "error: ERR DB index is out of range",
      "OK",
      "me",
      "error: NOPROTO unsupported protocol version",
      "error: ERR wrong number of arguments for 'ping' command"
    ])
  })

  it("says why and closes on input that is not RESP", async () => {
    const { backend } = lateBackend()
    const server = await startRespServer({
      host: "127.0.0.1",
      port: 0,
      backend,
      replicaId: "r1",
      group: "g",
      log: () => {}
    })
    servers.push(server)
    const [reply] = await exchange(server.port, "\x00\x01garbage\r\n", 1)
    expect(String(reply)).toMatch(/^error: ERR Protocol error/)
    // An array length that makes redis-parser throw (found by fuzzing) used to take the process down with it.
    const thrower = Buffer.concat([
      Buffer.from([0x2a, 0x80, 1, 0, 0, 0, 0, 0x0a]),
      Buffer.from(command("SET", "k", "hello"))
    ])
    const [thrown] = await exchange(server.port, thrower, 1)
    expect(String(thrown)).toMatch(/^error: ERR Protocol error/)
    expect(await exchange(server.port, command("PING"), 1)).toEqual(["PONG"])
  })
})
