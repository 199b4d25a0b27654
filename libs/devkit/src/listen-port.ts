/**
 * Ports for servers that a caller picks now and a process binds later (`reef up`, tests starting clusters).
 * A port the kernel hands out for `listen(0)` lies in the ephemeral range, which every outgoing connection also
 * draws from: in the seconds between choosing and binding, a client socket of another process can take it. A
 * port below that range is never used by outgoing connections, so once it is free it stays free.
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import * as Effect from "effect/Effect"

/** Listening ports are drawn from [LOWEST, start of the ephemeral range). */
const LOWEST = 20_000

/** The first port of the system's ephemeral range (Linux; the IANA range's start elsewhere). */
export const ephemeralRangeStart = (): number => {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])
    return Number.isInteger(first) && first > LOWEST ? first : 49_152
  } catch {
    return 49_152
  }
}

/** Whether `port` can be bound on `host` now. */
export const portFree = (port: number, host = "127.0.0.1"): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    const server = createServer()
    server.unref()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen({ port, host, exclusive: true }, () => server.close(() => resume(Effect.succeed(true))))
  })

/** A port the system picks (free now, but in the ephemeral range): the last resort of `freeListenPort`. */
const systemPort = (host: string): Effect.Effect<number> =>
  Effect.async<number>((resume) => {
    const server = createServer()
    server.unref()
    server.listen(0, host, () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resume(Effect.succeed(port)))
    })
  })

/** A free port below the ephemeral range, `count` consecutive ones free when asked; the system's pick if none. */
export const freeListenPort = (host = "127.0.0.1", count = 1): Effect.Effect<number> =>
  Effect.gen(function* () {
    const end = ephemeralRangeStart() - count
    for (let attempt = 0; attempt < 64 && end > LOWEST; attempt++) {
      const first = LOWEST + Math.floor(Math.random() * (end - LOWEST))
      let free = true
      for (let port = first; free && port < first + count; port++) free = yield* portFree(port, host)
      if (free) return first
    }
    return yield* systemPort(host)
  })
