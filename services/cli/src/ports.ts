/**
 * Stable ports for `reef up`: each endpoint has a documented default (NATS 4222, its monitoring 8222, the
 * gateway 50051, KV 7001 and up, /metrics 9464 and up); one that is taken falls back to a free port, and the
 * caller says so.
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

/** Hands out ports for one `reef up`: the preferred one when free and not handed out already. */
export const makePortChooser = () => {
  const handedOut = new Set<number>()
  return (preferred: number): Effect.Effect<PortChoice> =>
    Effect.gen(function* () {
      if (preferred !== 0 && !handedOut.has(preferred) && (yield* portFree(preferred))) {
        handedOut.add(preferred)
        return { port: preferred }
      }
      let port = yield* anyFreePort()
      while (handedOut.has(port)) port = yield* anyFreePort()
      handedOut.add(port)
      return preferred === 0 ? { port } : { port, fallback: `${preferred} is in use` }
    })
}
