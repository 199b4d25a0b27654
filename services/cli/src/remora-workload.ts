/**
 * The Remora part of `reef up --workload`: signed YCSB transactions (a few with bad signatures) through the
 * coordinator's framed `Submit` stream with a window of transactions in flight; throughput and latency from
 * submission to receipt, then the executed state's hash against the sequential reference executor's over
 * the order consensus chose (the receipts' seqs).
 */
import type { Receipt } from "@reef/proto"
import { percentileOfSorted } from "@reef/stats"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { UpFailedError } from "./cli/errors.js"
import type { WorkloadProgress, WorkloadRow } from "./workload.js"

export interface RemoraWorkloadOptions {
  readonly transactions: number
  readonly inFlight: number
  readonly invalidShare: number
  readonly timeoutSeconds: number
  readonly progress?: WorkloadProgress
}

export const remoraWorkload = (address: string, options: RemoraWorkloadOptions) =>
  Effect.gen(function* () {
    const { ExecutionCallError, makeExecutionClient, receiptOrder, referenceHash, signedWorkload } =
      yield* Effect.promise(() => import("@reef/coordinator"))
    const client = yield* makeExecutionClient({ address, timeoutMs: options.timeoutSeconds * 1000 })
    const failed = (message: string) => new UpFailedError({ message: `remora workload: ${message}` })
    // The coordinator serves before its workers have joined it: wait for them.
    const before = yield* client.state.pipe(
      Effect.filterOrFail((s) => s.workers.length > 0),
      Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("30 seconds"))),
      Effect.mapError(() => failed(`the coordinator at ${address} has no worker after 30 s`))
    )
    const n = options.transactions
    const workload = signedWorkload(
      { kind: "ycsb", keys: 10_000, objectsPerTx: 3, zipf: 0.9, statelessCostUs: 0, statefulCostUs: 0 },
      n,
      Date.now() % 1_000_000,
      options.invalidShare,
      `demo-${Date.now().toString(36)}-`
    )
    const part = `Remora YCSB, signed (${options.inFlight} in flight)`
    const latencies: Array<number> = []
    const receipts: Array<Receipt> = []
    let rejected = 0
    let lastError: unknown
    const started = performance.now()
    yield* Effect.async<void>((resume) => {
      let next = 0
      let done = 0
      const pump = () => {
        while (next < n && next - done < options.inFlight) {
          const t0 = performance.now()
          client.submitCallback(workload.txs[next++]!, (outcome) => {
            done++
            if (outcome instanceof ExecutionCallError) lastError = outcome
            else if (outcome._tag === "Rejected") rejected++
            else {
              receipts.push(outcome.receipt)
              latencies.push(performance.now() - t0)
            }
            options.progress?.(part, done, n)
            if (done === n) resume(Effect.void)
            else pump()
          })
        }
      }
      pump()
    }).pipe(
      Effect.timeoutFail({
        duration: `${options.timeoutSeconds} seconds`,
        onTimeout: () =>
          failed(`only ${receipts.length + rejected} of ${n} transactions answered in ${options.timeoutSeconds} s`)
      })
    )
    const seconds = (performance.now() - started) / 1000
    if (lastError !== undefined) return yield* failed(String((lastError as Error).message))
    latencies.sort((a, b) => a - b)
    const noOps = receipts.filter((r) => r.status === 2).length
    const rows: Array<WorkloadRow> = [
      {
        part,
        operations: n,
        seconds,
        perSecond: receipts.length / seconds,
        p50Ms: percentileOfSorted(latencies, 50),
        p99Ms: percentileOfSorted(latencies, 99),
        check:
          `${receipts.length - noOps} executed, ${noOps} bad signatures as no-ops, ${rejected} rejected; ` +
          `p90 ${percentileOfSorted(latencies, 90).toFixed(1)} ms`
      }
    ]
    // Every worker's objects, once everything accepted has executed.
    const state = yield* client.state.pipe(
      Effect.filterOrFail((s) => s.complete),
      Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("30 seconds"))),
      Effect.mapError(() => failed("the executed state was not complete 30 s after the last receipt"))
    )
    const alone = before.committed === 0 && state.committed === receipts.length
    const expected = alone ? referenceHash(receiptOrder(receipts), workload.byId) : ""
    const same = alone && expected === state.stateHash
    rows.push({
      part: "Remora state hash vs reference",
      operations: receipts.length,
      seconds: 0,
      perSecond: 0,
      check: !alone
        ? `not compared: the coordinator executed ${state.committed - receipts.length} other transactions`
        : same
          ? `equal: ${state.stateHash.slice(0, 16)}… (${state.blocks} blocks, plans adopted ${state.plansAdopted}, recomputed ${state.plansRecomputed})`
          : `DIFFERENT: executed ${state.stateHash.slice(0, 16)}…, reference ${expected.slice(0, 16)}…`
    })
    return { rows, ok: receipts.length + rejected === n && rejected === 0 && (same || !alone) }
  }).pipe(Effect.scoped)
