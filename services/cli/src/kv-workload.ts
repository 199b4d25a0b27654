/**
 * The KV part of `reef up --workload`: colocated clients (one per replica) write and read through the POPUC
 * group, then every replica must report the same state hash.
 */
import { makeKvClient } from "@reef/replica"
import { percentileOfSorted } from "@reef/stats"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { UpFailedError } from "./cli/errors.js"
import type { WorkloadProgress, WorkloadRow } from "./workload.js"

export const kvWorkload = (
  replicas: ReadonlyArray<string>,
  options: {
    readonly sets: number
    readonly inFlight: number
    readonly partTimeoutSeconds: number
    readonly progress?: WorkloadProgress
  }
) =>
  Effect.gen(function* () {
    const clients = yield* Effect.forEach(replicas, (_, i) =>
      makeKvClient({ replicas, mode: "colocated", clientIndex: i })
    )
    const rows: Array<WorkloadRow> = []
    const measure = <A, E>(
      part: string,
      span: string,
      n: number,
      op: (i: number) => Effect.Effect<A, E>,
      check: string
    ) =>
      Effect.gen(function* () {
        const latencies: Array<number> = []
        const t0 = performance.now()
        yield* Effect.forEach(
          Array.from({ length: n }, (_, i) => i),
          (i) => {
            const started = performance.now()
            // A replica may be rejoining for a moment (a self-quit on a busy machine): retry rather than fail
            // the demo. Sets write a fixed value per index and gets change nothing, so a retry is harmless.
            return op(i).pipe(
              Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.compose(Schedule.recurs(25)))),
              // One client span per operation (retries included): its trace reaches the replica's server span.
              Effect.withSpan(span, { kind: "client" }),
              Effect.tap(() =>
                Effect.sync(() => {
                  latencies.push(performance.now() - started)
                  options.progress?.(part, latencies.length, n)
                })
              )
            )
          },
          { concurrency: options.inFlight, discard: true }
        ).pipe(
          // A demo that stalls must say so and where, not hang: the group is given a generous bound (a
          // healthy 3-replica group finishes each part in seconds).
          Effect.timeoutFail({
            duration: `${options.partTimeoutSeconds} seconds`,
            onTimeout: () =>
              new UpFailedError({
                message: `${part}: only ${latencies.length} of ${n} operations finished in ${options.partTimeoutSeconds} s`
              })
          })
        )
        const seconds = (performance.now() - t0) / 1000
        latencies.sort((a, b) => a - b)
        rows.push({
          part,
          operations: n,
          seconds,
          perSecond: n / seconds,
          p50Ms: percentileOfSorted(latencies, 50),
          p99Ms: percentileOfSorted(latencies, 99),
          check
        })
      })
    yield* measure(
      `KV set (${replicas.length} replicas)`,
      "workload kv set",
      options.sets,
      (i) => clients[i % clients.length]!.set(`demo-${i % 100}`, Buffer.from(`value-${i}`)),
      "every set acknowledged after it was applied"
    )
    yield* measure(
      "KV get (linearizable)",
      "workload kv get",
      options.sets,
      (i) => clients[i % clients.length]!.get(`demo-${i % 100}`),
      "every get ordered through consensus"
    )
    // Every replica applied the same commands in the same order.
    const states = yield* Effect.forEach(replicas, (_, i) => clients[0]!.state(i)).pipe(
      Effect.filterOrFail((s) => new Set(s.map((x) => `${x.appliedCommands}/${x.stateHash}`)).size === 1),
      Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.compose(Schedule.recurs(100)))),
      Effect.either
    )
    const same = states._tag === "Right"
    rows.push({
      part: "replica state hashes",
      operations: replicas.length,
      seconds: 0,
      perSecond: 0,
      check: same
        ? `all equal: ${states.right[0]!.stateHash.slice(0, 16)}… after ${states.right[0]!.appliedCommands} commands`
        : "DIFFERENT"
    })
    return { rows, ok: same }
  }).pipe(Effect.scoped)
