/**
 * The link proxy: the inter-host links of the hosts harness (between nats-servers' route ports) go through it,
 * and it adds a one-way delay with jitter to every byte, and cuts hosts off on demand.
 *
 * Each link listens on the gateway and forwards to one host's route port; the proxy knows hosts by address,
 * so a connection's two ends are known. Data is held per direction in a queue of (due time, chunk): a chunk is
 * due `delay ± jitter` after it arrived (uniform jitter), but never before the chunk ahead of it (TCP is a
 * stream: jitter may not reorder bytes). A cut host's connections are destroyed and new ones refused until it
 * is healed. The proxy records how long each chunk was really held, so a run reports the delay it got, not
 * the one it asked for.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net"
import * as hdr from "hdr-histogram-js"
import { makePreciseTimer } from "./precise-timer.js"

export interface LinkSpec {
  /** The host index the link leads to. */
  readonly to: number
  readonly listenHost: string
  /** 0: a free one. */
  readonly listenPort: number
  readonly targetHost: string
  readonly targetPort: number
}

export interface ProxyOptions {
  readonly links: ReadonlyArray<LinkSpec>
  /** Host addresses by index: a connection's source address names the host it comes from. */
  readonly hostAddresses: ReadonlyArray<string>
  readonly delayMs: number
  readonly jitterMs: number
  /** Seed of the jitter's PRNG. */
  readonly seed: number
}

export interface ProxyStats {
  readonly chunks: number
  readonly bytes: number
  /** How long chunks were held, in ms (median, p99, max). */
  readonly heldMs: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly refused: number
  readonly cut: ReadonlyArray<number>
}

interface Pending {
  readonly due: bigint
  readonly chunk: Buffer
  readonly arrived: bigint
}

/** Bytes held per direction before the sender is paused (backpressure, as a slow link would apply). */
const HIGH_WATER = 4 * 1024 * 1024

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export interface LinkProxy {
  /** The listening port of each link, in the order given. */
  readonly ports: ReadonlyArray<number>
  readonly cut: (host: number) => void
  readonly heal: (host: number) => void
  readonly setDelay: (delayMs: number, jitterMs: number) => void
  readonly stats: () => ProxyStats
  /** Starts the counts and the held-time histogram afresh (e.g. once the cluster has formed). */
  readonly resetStats: () => void
  readonly close: () => Promise<void>
}

export const startLinkProxy = async (options: ProxyOptions): Promise<LinkProxy> => {
  let delayNs = BigInt(Math.round(options.delayMs * 1e6))
  let jitterNs = Math.round(options.jitterMs * 1e6)
  const random = mulberry32(options.seed)
  const held = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000_000,
    numberOfSignificantValueDigits: 3
  })
  let chunks = 0
  let bytes = 0
  let refused = 0
  const cut = new Set<number>()
  const hostOf = (address: string | undefined) => options.hostAddresses.indexOf((address ?? "").replace(/^::ffff:/, ""))
  const directions = new Set<Direction>()
  const connections = new Set<{ readonly ends: ReadonlySet<number>; readonly sockets: ReadonlyArray<Socket> }>()

  class Direction {
    readonly queue: Array<Pending> = []
    queued = 0
    last = 0n
    constructor(
      readonly from: Socket,
      readonly to: Socket
    ) {
      from.on("data", (chunk: Buffer) => this.push(chunk))
    }
    push(chunk: Buffer) {
      const arrived = process.hrtime.bigint()
      const offset = jitterNs === 0 ? 0n : BigInt(Math.round((random() * 2 - 1) * jitterNs))
      let due = arrived + delayNs + offset
      if (due < arrived) due = arrived
      if (due < this.last) due = this.last
      this.last = due
      this.queue.push({ due, chunk, arrived })
      this.queued += chunk.length
      if (this.queued > HIGH_WATER) this.from.pause()
      directions.add(this)
      timer.wakeAt(this.queue[0]!.due)
    }
    /** Writes what is due; returns the next deadline, if any. */
    flush(now: bigint): bigint | undefined {
      let i = 0
      while (i < this.queue.length && this.queue[i]!.due <= now) {
        const { chunk, arrived } = this.queue[i]!
        held.recordValue(Number(now - arrived))
        chunks++
        bytes += chunk.length
        this.queued -= chunk.length
        if (!this.to.destroyed) this.to.write(chunk)
        i++
      }
      if (i > 0) this.queue.splice(0, i)
      if (this.queued <= HIGH_WATER && this.from.isPaused()) this.from.resume()
      if (this.queue.length === 0) {
        directions.delete(this)
        return undefined
      }
      return this.queue[0]!.due
    }
  }

  const onWake = () => {
    const now = process.hrtime.bigint()
    let next: bigint | undefined
    for (const direction of directions) {
      const due = direction.flush(now)
      if (due !== undefined && (next === undefined || due < next)) next = due
    }
    if (next !== undefined) timer.wakeAt(next)
  }
  const timer = makePreciseTimer(onWake)

  const servers: Array<Server> = []
  const ports: Array<number> = []
  for (const link of options.links) {
    const server = createServer((inbound) => {
      const from = hostOf(inbound.remoteAddress)
      const ends = new Set([from, link.to])
      if ([...ends].some((h) => cut.has(h))) {
        refused++
        inbound.destroy()
        return
      }
      inbound.setNoDelay(true)
      const outbound = createConnection({ host: link.targetHost, port: link.targetPort })
      outbound.setNoDelay(true)
      const connection = { ends, sockets: [inbound, outbound] }
      connections.add(connection)
      const close = () => {
        connections.delete(connection)
        inbound.destroy()
        outbound.destroy()
      }
      for (const socket of connection.sockets) {
        socket.on("error", close)
        socket.on("close", close)
      }
      new Direction(inbound, outbound)
      new Direction(outbound, inbound)
    })
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(link.listenPort, link.listenHost, () => resolve())
    })
    const address = server.address()
    ports.push(typeof address === "object" && address !== null ? address.port : 0)
    servers.push(server)
  }

  return {
    ports,
    cut: (host) => {
      cut.add(host)
      for (const connection of connections) {
        if (connection.ends.has(host)) for (const socket of connection.sockets) socket.destroy()
      }
    },
    heal: (host) => {
      cut.delete(host)
    },
    setDelay: (delay, jitter) => {
      delayNs = BigInt(Math.round(delay * 1e6))
      jitterNs = Math.round(jitter * 1e6)
    },
    stats: () => ({
      chunks,
      bytes,
      heldMs: {
        p50: held.getValueAtPercentile(50) / 1e6,
        p99: held.getValueAtPercentile(99) / 1e6,
        max: held.maxValue / 1e6
      },
      refused,
      cut: [...cut]
    }),
    resetStats: () => {
      held.reset()
      chunks = 0
      bytes = 0
      refused = 0
    },
    close: async () => {
      for (const connection of connections) for (const socket of connection.sockets) socket.destroy()
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
      await timer.close()
    }
  }
}
