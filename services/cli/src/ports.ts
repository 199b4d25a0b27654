/**
 * Stable ports for `reef up`: each endpoint has a documented default (NATS 4222, its monitoring 8222, the
 * gateway 50051, KV 7001 and up, /metrics 9464 and up); one that is taken falls back to the next free port
 * above it (7001 taken: 7002, so a second `reef up` lands next to the first, predictably), and the caller says so.
 */
import { freeListenPort, portFree } from "@reef/devkit"
import * as Effect from "effect/Effect"

export { portFree }

/** A free port for a server `reef up` starts: below the ephemeral range, so no client socket takes it first. */
export const anyFreePort = (host = "127.0.0.1"): Effect.Effect<number> => freeListenPort(host)

export interface PortChoice {
  readonly port: number
  /** Set when the preferred port was taken: `7001 is in use`. */
  readonly fallback?: string
}

/** How far above a taken port the chooser looks for the next free one before taking any free port. */
export const NEXT_FREE_SEARCH = 200

/**
 * Hands out ports for one `reef up`: the preferred one when free and not handed out already, else the next
 * free one above it (within NEXT_FREE_SEARCH), else any free port.
 */
export const makePortChooser = () => {
  const handedOut = new Set<number>()
  const usable = (port: number) => (port <= 65535 && !handedOut.has(port) ? portFree(port) : Effect.succeed(false))
  return (preferred: number): Effect.Effect<PortChoice> =>
    Effect.gen(function* () {
      if (preferred !== 0 && (yield* usable(preferred))) {
        handedOut.add(preferred)
        return { port: preferred }
      }
      for (let next = preferred + 1; preferred !== 0 && next <= preferred + NEXT_FREE_SEARCH; next++) {
        if (yield* usable(next)) {
          handedOut.add(next)
          return { port: next, fallback: `${preferred} is in use` }
        }
      }
      let port = yield* anyFreePort()
      while (handedOut.has(port)) port = yield* anyFreePort()
      handedOut.add(port)
      return preferred === 0 ? { port } : { port, fallback: `${preferred} is in use` }
    })
}
