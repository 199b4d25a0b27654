import { createServer } from "node:net"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { anyFreePort, makePortChooser, NEXT_FREE_SEARCH, portFree } from "./ports.js"

describe("stable ports with fallbacks", () => {
  it("hands out the preferred port when free, never twice, and says why it falls back", async () => {
    const preferred = await Effect.runPromise(anyFreePort())
    const busy = createServer()
    const taken = await new Promise<number>((resolve) =>
      busy.listen(0, "127.0.0.1", () => resolve((busy.address() as { port: number }).port))
    )
    try {
      const choose = makePortChooser()
      expect(await Effect.runPromise(choose(preferred))).toEqual({ port: preferred })
      // Taken (here: handed out already) falls back to the next free port above it, not a random one.
      const again = await Effect.runPromise(choose(preferred))
      expect(again.port).toBeGreaterThan(preferred)
      expect(again.port).toBeLessThanOrEqual(preferred + NEXT_FREE_SEARCH)
      for (let p = preferred + 1; p < again.port; p++) expect(await Effect.runPromise(portFree(p))).toBe(false)
      expect(again.fallback).toBe(`${preferred} is in use`)
      const busyChoice = await Effect.runPromise(choose(taken))
      expect(busyChoice.port).not.toBe(taken)
      expect(busyChoice.fallback).toBe(`${taken} is in use`)
      if (taken + 1 <= 65535 && busyChoice.port <= taken + NEXT_FREE_SEARCH)
        expect(busyChoice.port).toBeGreaterThan(taken)
      expect(await Effect.runPromise(portFree(taken))).toBe(false)
      expect((await Effect.runPromise(choose(0))).fallback).toBeUndefined()
    } finally {
      busy.close()
    }
  })
})
