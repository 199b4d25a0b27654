/**
 * Suite `kernel`: the cost of the actor kernel over plain nats.js on the same server, in the same run. Each
 * ratio is named for what it compares:
 *
 *   ask        Reef ask to a counter actor  vs  nats.js `request` to a plain responder (round trip at 1 in
 *              flight, throughput with 64 in flight: 64 loops of one ask or request after another on each side)
 *   tell       Reef tell, one NATS message per tell  vs  nats.js publish, one message per publish, to a plain
 *              counting subscriber (unbatched vs unbatched)
 *   batched    Reef tellMany (1000 per NATS message)  vs  nats.js publish of the same 1000 messages framed into
 *              one NATS message (length-prefixed) and unframed by the subscriber (batched vs batched)
 *
 * Both sides send the same messages (same key length), encode every message they send and decode every
 * message they receive. Every tell run ends when the receiver has handled every message (checked with a
 * final ask / count) and is counted per message handled. Each path is warmed up first; then the contenders run
 * in interleaved rounds (harness/interleave.ts) and every ratio is the median and min–max over the rounds.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node"
import {
  Bus,
  CounterAddRpc,
  CounterGetRpc,
  counterActor,
  Messenger,
  natsKernelLayer,
  spawn,
  startNatsServer
} from "@reef/kernel"
import { CounterAdd, CounterValue } from "@reef/proto"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import {
  type Conditions,
  figureOf,
  interleave,
  machineNow,
  newHistogram,
  ratioOf,
  readMachine,
  recordMs,
  summarize,
  writeResult
} from "./harness/index.js"
import { peakRssMb, printTable } from "./report.js"

const CLUSTER = "bench"
const target = { cluster: CLUSTER, role: "counter", id: "b1" }

interface Sizes {
  readonly roundTrips: number
  readonly asks: number
  readonly tells: number
  readonly batch: number
}

const sizesFor = (quick: boolean): Sizes =>
  quick
    ? { roundTrips: 500, asks: 5_000, tells: 50_000, batch: 1000 }
    : { roundTrips: 3_000, asks: 40_000, tells: 400_000, batch: 1000 }

/** A key as long as the tell runs' keys (`tell-<kind>-<random>`), so both sides send the same bytes. */
const sameLengthKey = (kind: string) => `${kind}-${Math.random()}`.padEnd(30, "0").slice(0, 30)

const now = () => performance.now()

// ---- raw nats.js baselines ------------------------------------------------------------------------------------

/**
 * The raw baselines do the same work as the counter actor (decode the request, update a map, encode the
 * reply), so the ratios measure what the kernel adds, not the counter's own work.
 */
const rawResponder = (nc: NatsConnection, subject: string) => {
  const values = new Map<string, number>()
  let adds = 0
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      const add = CounterAdd.decode(msg.data)
      const value = (values.get(add.key) ?? 0) + add.amount
      values.set(add.key, value)
      adds++
      msg.respond(CounterValue.encode({ key: add.key, value, adds }).finish())
    }
  })
}

/** The message every ask and raw request sends. */
const askMessage: CounterAdd = { key: sameLengthKey("ask"), amount: 1 }

const rawRequest = (nc: NatsConnection, subject: string) =>
  nc.request(subject, CounterAdd.encode(askMessage).finish(), { timeout: 5000 })

const rawRoundTrips = async (nc: NatsConnection, subject: string, n: number) => {
  const latencies = newHistogram()
  for (let i = 0; i < n; i++) {
    const t0 = now()
    await rawRequest(nc, subject)
    recordMs(latencies, now() - t0)
  }
  return summarize(latencies)
}

/** `n` requests by `concurrency` loops, each sending its next request when the previous one is answered. */
const inFlight = async (n: number, concurrency: number, one: () => Promise<unknown>) => {
  let next = 0
  const t0 = now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++
        await one()
      }
    })
  )
  return n / ((now() - t0) / 1000)
}

/** Tell runs flush after this many messages (the flush awaits the server's reply). */
const FLUSH_EVERY = 5000

/** `batch` messages framed into one buffer: a 4-byte length before each encoded message. */
const frame = (messages: ReadonlyArray<CounterAdd>): Uint8Array => {
  const parts = messages.map((m) => CounterAdd.encode(m).finish())
  const out = Buffer.allocUnsafe(parts.reduce((s, p) => s + 4 + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.writeUInt32BE(p.length, at)
    out.set(p, at + 4)
    at += 4 + p.length
  }
  return out
}

/**
 * The plain nats.js tell: one message per publish (`batch` 1) or `batch` messages framed into one publish, every
 * message encoded by the publisher and decoded and counted by the subscriber.
 */
const rawPublishThroughput = async (
  pub: NatsConnection,
  sub: NatsConnection,
  subject: string,
  n: number,
  batch = 1
) => {
  const message: CounterAdd = { key: sameLengthKey("raw"), amount: 1 }
  let received = 0
  let done: () => void = () => {}
  const finished = new Promise<void>((resolve) => {
    done = resolve
  })
  const values = new Map<string, number>()
  const count = (add: CounterAdd) => {
    values.set(add.key, (values.get(add.key) ?? 0) + add.amount)
    received++
  }
  const subscription = sub.subscribe(subject, {
    callback: (_err, msg) => {
      if (batch === 1) count(CounterAdd.decode(msg.data))
      else {
        const data = msg.data
        const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
        for (let at = 0; at < data.length; ) {
          const length = view.readUInt32BE(at)
          count(CounterAdd.decode(data.subarray(at + 4, at + 4 + length)))
          at += 4 + length
        }
      }
      if (received === n) done()
    }
  })
  await sub.flush()
  const t0 = now()
  if (batch === 1) {
    for (let i = 0; i < n; i++) {
      pub.publish(subject, CounterAdd.encode(message).finish())
      if (i % FLUSH_EVERY === 0) await pub.flush()
    }
  } else {
    const messages = Array.from({ length: batch }, () => message)
    for (let sent = 0; sent < n; sent += batch) {
      if (sent % FLUSH_EVERY === 0) await pub.flush()
      pub.publish(subject, frame(messages))
    }
  }
  await pub.flush()
  await finished
  const rate = n / ((now() - t0) / 1000)
  subscription.unsubscribe()
  return rate
}

// ---- the suite --------------------------------------------------------------------------------------------------

export const run = async (quick: boolean) => {
  const sizes = sizesFor(quick)
  const started = readMachine()
  const program = Effect.gen(function* () {
    const server = yield* startNatsServer({ jetstream: false })
    // The actor gets its own connection and runtime, like a separate process would.
    const actorRuntime = ManagedRuntime.make(
      natsKernelLayer({ servers: server.url, name: "bench-actor" }, { cluster: CLUSTER })
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => actorRuntime.dispose()))
    yield* Effect.promise(() =>
      actorRuntime.runPromise(
        Effect.forkDaemon(Effect.scoped(Effect.zipRight(spawn(counterActor, "b1"), Effect.never)))
      )
    )
    const client = ManagedRuntime.make(
      natsKernelLayer({ servers: server.url, name: "bench-client" }, { cluster: CLUSTER }) as Layer.Layer<
        Messenger | Bus
      >
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => client.dispose()))
    const raw = yield* Effect.promise(() =>
      Promise.all([0, 1].map(() => connect({ servers: server.url, noAsyncTraces: true })))
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(raw.map((c) => c.close()))))
    const [rawA, rawB] = raw as [NatsConnection, NatsConnection]
    rawResponder(rawB, "raw.ask")
    yield* Effect.promise(() => rawB.flush())

    const messenger = yield* Effect.promise(() => client.runPromise(Messenger))
    const bus = yield* Effect.promise(() => client.runPromise(Bus))
    // Made anew for every ask, as a caller with a new message would (an ask encodes its message when made).
    const ask = () => messenger.ask(target, CounterAddRpc, askMessage)
    const askEffect = Effect.suspend(ask)
    /** `n` asks by `concurrency` fibers, each asking again when its previous ask is answered (as `inFlight`). */
    const askInFlight = (n: number, concurrency: number) => () =>
      client.runPromise(
        Effect.gen(function* () {
          let next = 0
          // The loop's own steps are the caller's, not the kernel's: as few as `inFlight`'s.
          const loop = Effect.whileLoop({ while: () => next++ < n, body: ask, step: () => {} })
          const t0 = now()
          yield* Effect.all(
            Array.from({ length: concurrency }, () => loop),
            { concurrency: "unbounded", discard: true }
          )
          return n / ((now() - t0) / 1000)
        })
      )
    const rawAskInFlight = (n: number, concurrency: number) => () =>
      inFlight(n, concurrency, () => rawRequest(rawA, "raw.ask"))
    const reefRoundTrips = () =>
      client.runPromise(
        Effect.gen(function* () {
          const latencies = newHistogram()
          for (let i = 0; i < sizes.roundTrips; i++) {
            const t0 = now()
            yield* askEffect
            recordMs(latencies, now() - t0)
          }
          return summarize(latencies)
        })
      )

    const tellRun = (batched: boolean) => async () => {
      const key = sameLengthKey(`tell-${batched}`)
      const message: CounterAdd = { key, amount: 1 }
      const batch = Array.from({ length: sizes.batch }, () => message)
      const t0 = now()
      await client.runPromise(
        Effect.gen(function* () {
          // Flushed every FLUSH_EVERY messages, as the raw publisher does: a flush's round trip also lets the
          // process read its sockets (an Effect loop yields only to microtasks), without which a receiver in
          // the same process reads nothing until the run ends and, on a loaded machine, the server cuts it off
          // as a slow consumer.
          if (batched) {
            for (let sent = 0; sent < sizes.tells; sent += sizes.batch) {
              if (sent % FLUSH_EVERY === 0) yield* bus.flush
              yield* messenger.tellMany(target, CounterAdd, batch)
            }
          } else {
            for (let sent = 0; sent < sizes.tells; sent++) {
              if (sent % FLUSH_EVERY === 0) yield* bus.flush
              yield* messenger.tell(target, CounterAdd, message)
            }
          }
          yield* bus.flush
          const value = yield* messenger.ask(target, CounterGetRpc, { key }, { timeoutMs: 60_000 })
          if (value.value !== sizes.tells) yield* Effect.dieMessage(`lost tells: ${value.value} of ${sizes.tells}`)
        })
      )
      return sizes.tells / ((now() - t0) / 1000)
    }
    const rawPublish = (batch: number) => () => rawPublishThroughput(rawA, rawB, "raw.tell", sizes.tells, batch)

    // Warm up every path (JIT, connections, membership) before the first measured round.
    yield* Effect.promise(askInFlight(2_000, 16))
    yield* Effect.promise(rawAskInFlight(2_000, 16))
    yield* Effect.promise(async () => {
      for (const warm of [tellRun(false), tellRun(true), rawPublish(1), rawPublish(sizes.batch)]) await warm()
    })

    const rounds = yield* Effect.promise(() =>
      interleave(
        { quick, label: "kernel" },
        {
          reefRoundTrip: reefRoundTrips,
          rawRoundTrip: () => rawRoundTrips(rawA, "raw.ask", sizes.roundTrips),
          reefAsk: askInFlight(sizes.asks, 64),
          rawAsk: rawAskInFlight(sizes.asks, 64),
          reefTell: tellRun(false),
          rawPublish: rawPublish(1),
          reefBatched: tellRun(true),
          rawBatched: rawPublish(sizes.batch)
        }
      )
    )
    const message: Conditions = {
      message: "CounterAdd, 30-byte key, encoded by the sender and decoded by the receiver on both sides",
      server: "one nats-server, loopback, no JetStream",
      warmUp: "every path run once before the first round"
    }
    const ratios = {
      askThroughputVsNatsJsRequest: ratioOf(
        {
          numerator: "Reef ask to a counter actor, 64 in flight (asks/s)",
          denominator: "nats.js request to a plain responder doing the same work, 64 in flight (requests/s)",
          conditions: { ...message, inFlight: 64, requestsPerRun: sizes.asks }
        },
        rounds,
        (r) => r.reefAsk,
        (r) => r.rawAsk
      ),
      askRoundTripP50VsNatsJsRequest: ratioOf(
        {
          numerator: "Reef ask round trip p50, 1 in flight (ms)",
          denominator: "nats.js request round trip p50, 1 in flight (ms)",
          conditions: { ...message, inFlight: 1, roundTripsPerRun: sizes.roundTrips },
          note: "lower is better: above 1 is what the kernel adds to a round trip"
        },
        rounds,
        (r) => r.reefRoundTrip.p50Ms,
        (r) => r.rawRoundTrip.p50Ms
      ),
      tellVsNatsJsPublishUnbatched: ratioOf(
        {
          numerator: "Reef tell, one NATS message per tell (messages handled/s)",
          denominator: "nats.js publish, one NATS message per message (messages handled/s)",
          conditions: { ...message, messagesPerRun: sizes.tells, flushEvery: FLUSH_EVERY }
        },
        rounds,
        (r) => r.reefTell,
        (r) => r.rawPublish
      ),
      batchedTellVsNatsJsBatchedPublish: ratioOf(
        {
          numerator: `Reef tellMany, ${sizes.batch} messages per NATS message (messages handled/s)`,
          denominator: `nats.js publish of ${sizes.batch} length-prefixed messages per NATS message (messages handled/s)`,
          conditions: { ...message, messagesPerRun: sizes.tells, batch: sizes.batch, flushEvery: FLUSH_EVERY }
        },
        rounds,
        (r) => r.reefBatched,
        (r) => r.rawBatched
      )
    }
    const fig = (f: (r: (typeof rounds)[number]["values"]) => number) => figureOf(rounds, f)
    const metrics = {
      askRoundTripP50Ms: fig((r) => r.reefRoundTrip.p50Ms),
      askRoundTripP99Ms: fig((r) => r.reefRoundTrip.p99Ms),
      natsJsRequestRoundTripP50Ms: fig((r) => r.rawRoundTrip.p50Ms),
      natsJsRequestRoundTripP99Ms: fig((r) => r.rawRoundTrip.p99Ms),
      askThroughputPerSec: fig((r) => r.reefAsk),
      natsJsRequestThroughputPerSec: fig((r) => r.rawAsk),
      tellThroughputPerSec: fig((r) => r.reefTell),
      natsJsPublishThroughputPerSec: fig((r) => r.rawPublish),
      batchedTellThroughputPerSec: fig((r) => r.reefBatched),
      natsJsBatchedPublishThroughputPerSec: fig((r) => r.rawBatched),
      batchSize: sizes.batch,
      latencies: "hdr-histogram-js, one histogram per run; p50/p99 per round, median and min–max over rounds",
      peakRssMbBenchProcess: peakRssMb()
    }
    const m = (x: { median: number }) => x.median
    printTable(
      `kernel benchmark${quick ? " (quick)" : ""}: Reef vs nats.js, same server, ${rounds.length} interleaved rounds (medians)`,
      ["measure", "reef", "nats.js", "ratio median", "ratio min–max"],
      [
        [
          "ask round trip p50 (ms)",
          m(metrics.askRoundTripP50Ms),
          m(metrics.natsJsRequestRoundTripP50Ms),
          ratios.askRoundTripP50VsNatsJsRequest
        ],
        ["ask round trip p99 (ms)", m(metrics.askRoundTripP99Ms), m(metrics.natsJsRequestRoundTripP99Ms), undefined],
        [
          "ask vs request, 64 in flight (/s)",
          m(metrics.askThroughputPerSec),
          m(metrics.natsJsRequestThroughputPerSec),
          ratios.askThroughputVsNatsJsRequest
        ],
        [
          "tell vs publish, unbatched (/s)",
          m(metrics.tellThroughputPerSec),
          m(metrics.natsJsPublishThroughputPerSec),
          ratios.tellVsNatsJsPublishUnbatched
        ],
        [
          `tellMany vs framed publish, ${sizes.batch}/msg (/s)`,
          m(metrics.batchedTellThroughputPerSec),
          m(metrics.natsJsBatchedPublishThroughputPerSec),
          ratios.batchedTellVsNatsJsBatchedPublish
        ]
      ].map(([name, a, b, r]) => [
        name,
        a,
        b,
        r === undefined ? "" : (r as { median: number }).median,
        r === undefined ? "" : `${(r as { min: number }).min}–${(r as { max: number }).max}`
      ])
    )
    console.log(`peak RSS of the benchmark process: ${metrics.peakRssMbBenchProcess} MB`)
    const path = yield* Effect.promise(() =>
      writeResult({
        suite: "kernel",
        quick,
        command: `pnpm bench kernel${quick ? " --quick" : ""}`,
        machine: machineNow(started),
        metrics,
        ratios
      })
    )
    console.log(`wrote ${path}`)
  })
  await Effect.runPromise(Effect.scoped(program))
}
