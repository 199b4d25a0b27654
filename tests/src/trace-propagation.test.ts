/**
 * "A trace started by a gRPC call shows spans from two different actor processes under one trace id."
 * The test process starts the trace (a client span recorded by an in-memory exporter), calls the gateway's
 * Ping over gRPC with a relay c1 -> c2, and every Reef process exports its spans by OTLP/HTTP to a receiver
 * the test runs. All three processes (gateway, c1, c2) must report spans under the client's trace id.
 */
import { ping } from "@reef/gateway"
import { freePort, isJoined, Membership, type NatsServer } from "@reef/kernel"
import { ObservabilityTest, type OtlpReceiver, startOtlpReceiver, TestSpans } from "@reef/observability"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kernelClient, makeHarness, startActorProcess, startNats } from "./harness.js"

const cluster = "trace"
const harness = makeHarness()
let nats: NatsServer
let receiver: OtlpReceiver
let grpcPort: number

beforeAll(async () => {
  nats = await startNats(harness)
  receiver = await harness.run(startOtlpReceiver())
  grpcPort = await Effect.runPromise(freePort)
  const env = {
    OTEL_SDK_DISABLED: "false",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    // Export quickly instead of every 5 s.
    OTEL_BSP_SCHEDULE_DELAY: "100"
  }
  const common = { natsUrl: nats.url, cluster, env }
  await Promise.all([
    startActorProcess(harness, { role: "gateway", id: "gw", ...common, extraArgs: ["--grpc-port", String(grpcPort)] }),
    startActorProcess(harness, { role: "counter", id: "c1", ...common }),
    startActorProcess(harness, { role: "counter", id: "c2", ...common })
  ])
  const client = kernelClient(nats.url, cluster)
  await client.runPromise(
    Effect.flatMap(Membership, (m) =>
      m.awaitMembers((ms) => ["gw", "c1", "c2"].every((id) => ms.some((x) => x.address?.id === id && isJoined(x))))
    )
  )
  await client.dispose()
}, 60_000)

afterAll(() => harness.close())

describe("trace propagation across processes", () => {
  it("one trace id covers the gRPC client, the gateway and both counter processes", async () => {
    const { traceId, clientSpanId, reply } = await Effect.gen(function* () {
      const reply = yield* ping(`127.0.0.1:${grpcPort}`, {
        target: { cluster, role: "counter", id: "c1" },
        relay: [{ cluster, role: "counter", id: "c2" }],
        payload: "trace me"
      })
      const spans = yield* Effect.flatMap(TestSpans, (t) => t.spans)
      const client = spans.find((s) => s.name === "reef.v1.Cluster/Ping")
      return { traceId: client!.spanContext().traceId, clientSpanId: client!.spanContext().spanId, reply }
    }).pipe(Effect.provide(ObservabilityTest), Effect.runPromise)

    expect(reply.hops.map((h) => h.address?.id)).toEqual(["c1", "c2"])
    const instancesOf = (spans: ReadonlyArray<{ traceId: string; resourceAttributes: Record<string, unknown> }>) =>
      new Set(
        spans.filter((s) => s.traceId === traceId).map((s) => String(s.resourceAttributes["service.instance.id"]))
      )
    const spans = await Effect.runPromise(
      receiver
        .waitForSpans((all) => ["gw", "c1", "c2"].every((id) => instancesOf(all).has(id)))
        .pipe(Effect.timeout("20 seconds"))
    )
    const inTrace = spans.filter((s) => s.traceId === traceId)
    expect(instancesOf(spans)).toEqual(new Set(["gw", "c1", "c2"]))
    // The gateway's server span, and messaging spans with the OTel conventions on the actors.
    expect(inTrace.some((s) => s.serviceName === "reef-gateway" && s.kind === "server")).toBe(true)
    const processed = inTrace.filter((s) => s.name.startsWith("process ") && s.kind === "consumer")
    expect(processed.map((s) => s.attributes["messaging.destination.name"]).sort()).toEqual([
      `reef.${cluster}.counter.c1`,
      `reef.${cluster}.counter.c2`
    ])
    expect(processed.every((s) => s.attributes["messaging.system"] === "nats")).toBe(true)
    expect(inTrace.some((s) => s.name === `send reef.${cluster}.counter.c2` && s.kind === "producer")).toBe(true)
    // Parent links are intact: every exported span's parent is another exported span or the test's client span.
    const ids = new Set([clientSpanId, ...inTrace.map((s) => s.spanId)])
    expect(inTrace.filter((s) => s.parentSpanId === undefined || !ids.has(s.parentSpanId))).toEqual([])
  })
})
