/**
 * Remora's traces across processes (issue 14, "Traces"): a coordinator and two worker processes export by
 * OTLP/HTTP to a receiver the test runs. For one transaction that needed a lease transfer, one trace holds its
 * consensus window (coordinator), a dispatch batch of the window (its child) with the batch's delivery on a
 * worker (NATS send and process spans), the lease transfer on both sides (the two workers), and the
 * transaction's receipt span links to that window:
 * window → dispatch → worker → lease → receipt.
 */

import { signedWorkload } from "@reef/coordinator"
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "@reef/observability"
import type { Receipt } from "@reef/proto"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHarness, startNats } from "./harness.js"
import { type RemoraProcesses, startRemoraProcesses, submitAll } from "./remora-harness.js"

const harness = makeHarness()
let receiver: OtlpReceiver
let remora: RemoraProcesses

beforeAll(async () => {
  const nats = await startNats(harness)
  receiver = await harness.run(startOtlpReceiver())
  remora = await startRemoraProcesses(harness, {
    natsUrl: nats.url,
    cluster: "remora-trace",
    workers: 2,
    // Random placement over a few hot keys: consecutive writers of a key often run on different workers.
    coordinatorArgs: ["--window-ms", "50", "--policy", "random"],
    env: { OTEL_SDK_DISABLED: "false", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" }
  })
}, 90_000)

afterAll(() => harness.close())

const instance = (s: ReceivedSpan) => String(s.resourceAttributes["service.instance.id"])

describe("Remora traces", () => {
  it("one trace holds a transaction's window, its dispatch, and a lease transfer on two workers; its receipt links to the window", async () => {
    const workload = signedWorkload(
      { kind: "ycsb", keys: 8, objectsPerTx: 2, zipf: 0, statelessCostUs: 0, statefulCostUs: 0 },
      200,
      5,
      0
    )
    // In waves, so the keys' owners change between blocks.
    const receipts: Array<Receipt> = []
    for (let i = 0; i < workload.txs.length; i += 20) {
      for (const o of await submitAll(remora.client, workload.txs.slice(i, i + 20), 20)) {
        if (o._tag === "Executed") receipts.push(o.receipt)
      }
    }
    const moved = new Set(receipts.filter((r) => r.leaseTransfers > 0).map((r) => r.txId))
    expect(moved.size).toBeGreaterThan(0)

    /** The chain for one moved transaction, or undefined while its spans have not all arrived. */
    const chainOf = (spans: ReadonlyArray<ReceivedSpan>) => {
      for (const receipt of spans.filter(
        (s) => s.name === "remora.receipt" && moved.has(String(s.attributes["remora.tx.id"]))
      )) {
        const window = spans.find(
          (s) => s.name === "remora.consensus_window" && receipt.links.some((l) => l.spanId === s.spanId)
        )
        if (window === undefined) continue
        const inTrace = spans.filter((s) => s.traceId === window.traceId)
        // window → dispatch → the kernel's send → the worker's process span of the batch.
        const delivered = inTrace.flatMap((process) => {
          if (process.kind !== "consumer" || !instance(process).startsWith("w")) return []
          const send = inTrace.find((s) => s.spanId === process.parentSpanId && s.kind === "producer")
          const dispatch = inTrace.find(
            (s) => s.spanId === send?.parentSpanId && s.name === "remora.dispatch" && s.parentSpanId === window.spanId
          )
          return dispatch === undefined ? [] : [{ dispatch, process }]
        })
        const dispatch = delivered[0]?.dispatch
        const leases = inTrace.filter((s) => s.name === "remora.lease_transfer")
        const fetched = leases.find((s) => s.attributes["remora.lease.direction"] === "in")
        const sent = leases.find(
          (s) =>
            s.attributes["remora.lease.direction"] === "out" &&
            fetched !== undefined &&
            s.attributes["remora.object.key"] === fetched.attributes["remora.object.key"] &&
            s.attributes["remora.object.version"] === fetched.attributes["remora.object.version"]
        )
        if (dispatch !== undefined && fetched !== undefined && sent !== undefined) {
          return { receipt, window, dispatch, delivered, fetched, sent, inTrace }
        }
      }
      return undefined
    }
    const spans = await Effect.runPromise(
      receiver
        .waitForSpans((all) => chainOf(all) !== undefined)
        .pipe(
          Effect.timeout("30 seconds"),
          Effect.catchAll(() =>
            Effect.flatMap(receiver.spans, (all) =>
              Effect.die(
                new Error(
                  `no complete window → dispatch → lease → receipt chain; ${all.length} spans: ${[
                    ...new Set(all.map((s) => `${instance(s)} ${s.name}`))
                  ].join(", ")}`
                )
              )
            )
          )
        )
    )
    const { receipt, window, dispatch, delivered, fetched, sent, inTrace } = chainOf(spans)!
    expect(instance(window)).toBe("x1")
    expect(instance(dispatch)).toBe("x1")
    expect(delivered.every(({ process }) => process.attributes["messaging.system"] === "nats")).toBe(true)
    expect(instance(receipt)).toBe("x1")
    expect(window.attributes["remora.height"]).toBeGreaterThan(0)
    // The two sides of the transfer: the worker that fetched and the one that handed the object over.
    expect(new Set([instance(fetched), instance(sent)])).toEqual(new Set(["w1", "w2"]))
    expect(fetched.attributes["remora.lease.from"]).toBe(instance(sent))
    expect(fetched.attributes["remora.lease.to"]).toBe(instance(fetched))
    // One trace across the coordinator and both workers.
    expect(new Set(inTrace.map(instance))).toEqual(new Set(["x1", "w1", "w2"]))
    expect(receipt.attributes["remora.lease_transfers"]).toBeGreaterThan(0)
  }, 90_000)
})
