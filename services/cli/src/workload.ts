/**
 * The demo workload of `reef up --workload`: real traffic through the kernel against the running counters,
 * with results a person can read. Each part checks its own result (the counters must add up).
 */

import { CounterAddRpc, CounterGetRpc, Messenger, PingRpc } from "@reef/kernel"
import { type ActorAddress, CounterAdd } from "@reef/proto"
import { percentileOfSorted } from "@reef/stats"
import * as Effect from "effect/Effect"

export interface WorkloadRow {
  readonly part: string
  readonly operations: number
  readonly seconds: number
  readonly perSecond: number
  readonly p50Ms?: number
  readonly p99Ms?: number
  readonly check: string
}

/** Told after each operation of a part: `reef up` draws a progress line from it. */
export type WorkloadProgress = (part: string, done: number, total: number) => void

/**
 * Every operation is a client span, so with tracing on each is one trace from the workload through the actors
 * (without, a span costs microseconds against an ask's hundreds).
 */
export const kernelWorkload = (counters: ReadonlyArray<ActorAddress>, progress: WorkloadProgress = () => {}) =>
  Effect.gen(function* () {
    const messenger = yield* Messenger
    const rows: Array<WorkloadRow> = []
    const key = `workload-${Date.now()}`

    // Asks: 32 in flight, spread over the counters.
    const asks = 4_000
    const latencies: Array<number> = []
    let started = performance.now()
    const askPart = "ask (32 in flight)"
    yield* Effect.forEach(
      Array.from({ length: asks }, (_, i) => i),
      (i) => {
        const t0 = performance.now()
        const counter = counters[i % counters.length]!
        return messenger.ask(counter, CounterAddRpc, { key, amount: 1 }).pipe(
          Effect.withSpan("workload ask", { kind: "client", attributes: { "reef.actor": `counter/${counter.id}` } }),
          Effect.tap(() =>
            Effect.sync(() => {
              latencies.push(performance.now() - t0)
              progress(askPart, latencies.length, asks)
            })
          )
        )
      },
      { concurrency: 32, discard: true }
    )
    let seconds = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    rows.push({
      part: askPart,
      operations: asks,
      seconds,
      perSecond: asks / seconds,
      p50Ms: percentileOfSorted(latencies, 50),
      p99Ms: percentileOfSorted(latencies, 99),
      check: "every ask answered"
    })

    // Batched tells: 200 batches of 500 to the first counter, then one ask proves every one was applied.
    const batches = 200
    const batchSize = 500
    const batch = Array.from({ length: batchSize }, () => CounterAdd.fromPartial({ key: `${key}-tell`, amount: 1 }))
    started = performance.now()
    for (let b = 0; b < batches; b++) {
      yield* messenger
        .tellMany(counters[0]!, CounterAdd, batch)
        .pipe(
          Effect.withSpan("workload tell batch", { kind: "producer", attributes: { "reef.batch.size": batchSize } })
        )
      progress(`batched tell (${batchSize}/msg)`, (b + 1) * batchSize, batches * batchSize)
    }
    const total = yield* messenger
      .ask(counters[0]!, CounterGetRpc, { key: `${key}-tell` })
      .pipe(Effect.withSpan("workload check", { kind: "client" }))
    seconds = (performance.now() - started) / 1000
    const expected = batches * batchSize
    rows.push({
      part: `batched tell (${batchSize}/msg)`,
      operations: expected,
      seconds,
      perSecond: expected / seconds,
      check:
        total.value === expected ? `counter = ${total.value} (ok)` : `counter = ${total.value}, expected ${expected}`
    })

    // Ping through every counter: one trace crossing every process.
    started = performance.now()
    const [first, ...rest] = counters
    const ping = yield* messenger
      .ask(first!, PingRpc, { target: first, relay: rest, payload: "workload" })
      .pipe(Effect.withSpan("workload ping", { kind: "client" }))
    seconds = (performance.now() - started) / 1000
    rows.push({
      part: "ping relay",
      operations: 1,
      seconds,
      perSecond: 1 / seconds,
      check: `hops ${ping.hops.map((h) => `${h.address?.id}@${h.pid}`).join(" -> ")}`
    })
    return { rows, ok: total.value === expected }
  })
