/**
 * The Redis endpoint's reader of a connection's bytes (`makeRespReader`, on redis-parser): hostile bytes give
 * commands, empty commands (answered with an error) or one protocol error (the server then closes the
 * connection), never an exception, and the same events however the bytes are cut into reads, as TCP may
 * deliver them.
 */
import { isDeepStrictEqual } from "node:util"
import { fuzzDecoder, fuzzRuns } from "@reef/kernel/fuzz"
import { expect, it } from "vitest"
import { makeRespReader } from "./resp-server.js"

type Event = { readonly command: ReadonlyArray<Buffer> } | { readonly protocolError: true }

/** The events of a connection that receives `bytes` in the reads `cuts` delimit. */
const eventsOf = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Event> => {
  const events: Array<Event> = []
  const read = makeRespReader(
    (args) => events.push({ command: args }),
    () => events.push({ protocolError: true })
  )
  let from = 0
  for (const to of [...cuts, bytes.length]) {
    if (to > from) read(Buffer.from(bytes.subarray(from, to)))
    from = Math.max(from, to)
  }
  return events
}

const seeds = [
  "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n",
  "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n",
  "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n",
  "*3\r\n$4\r\nMSET\r\n$0\r\n\r\n$-1\r\n",
  "*1\r\n*2\r\n:1\r\n+OK\r\n-ERR x\r\n"
].map((s) => Buffer.from(s, "latin1"))

it("reads hostile bytes into commands or a protocol error, the same whatever the reads", () => {
  const report = fuzzDecoder({
    name: "Redis endpoint's RESP reader (makeRespReader on redis-parser)",
    decode: (bytes) => {
      const whole = eventsOf(bytes, [])
      const third = Math.floor(bytes.length / 3)
      const split = eventsOf(bytes, [third, 2 * third, 2 * third + 1])
      const byteByByte =
        bytes.length <= 64
          ? eventsOf(
              bytes,
              Array.from({ length: bytes.length }, (_, i) => i)
            )
          : split
      return { whole, split, byteByByte }
    },
    refused: () => false,
    check: ({ whole, split, byteByByte }) =>
      isDeepStrictEqual(whole, split) && isDeepStrictEqual(whole, byteByByte)
        ? undefined
        : `reads cut differently give different events: ${JSON.stringify(whole).slice(0, 200)} vs ${JSON.stringify(split).slice(0, 200)}`,
    seeds
  })
  expect(report.cases).toBe(fuzzRuns())
}, 300_000)
