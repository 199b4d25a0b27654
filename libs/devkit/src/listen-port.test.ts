import { createServer } from "node:net"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { ephemeralRangeStart, freeListenPort, portFree } from "./listen-port.js"

describe("freeListenPort", () => {
  it("gives a run of free ports below the ephemeral range", async () => {
    const first = await Effect.runPromise(freeListenPort("127.0.0.1", 4))
    expect(first + 4).toBeLessThanOrEqual(ephemeralRangeStart())
    for (let port = first; port < first + 4; port++) expect(await Effect.runPromise(portFree(port))).toBe(true)
  })

  it("sees a bound port as taken", async () => {
    const server = createServer()
    const port = await Effect.runPromise(freeListenPort())
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
    try {
      expect(await Effect.runPromise(portFree(port))).toBe(false)
    } finally {
      server.close()
    }
  })
})
