/**
 * Traces of the replicated KV: "a span per consensus instance (proposal to decision, with instance, rounds,
 * decided-set size, suspects) with rounds as child spans; a client `Set` span links to the instance that
 * decided it." Three replica processes export by OTLP/HTTP to a receiver the test runs.
 */
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "@reef/observability"
import { makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { useGroup } from "./popuc-harness.js"

let receiver: OtlpReceiver
const fixture = useGroup(async (harness) => {
  receiver = await harness.run(startOtlpReceiver())
  return {
    n: 3,
    cluster: "popuctrace",
    env: { OTEL_SDK_DISABLED: "false", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" }
  }
})

describe("POPUC traces", () => {
  it("a Set's server span links to the instance span that decided it; rounds are its children", async () => {
    const response = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* makeKvClient({ replicas: fixture.group.addresses, mode: "colocated", clientIndex: 0 })
        return yield* client.set("traced", Buffer.from("value"))
      }).pipe(Effect.scoped)
    )
    const isSetSpan = (s: ReceivedSpan) =>
      s.kind === "server" &&
      s.attributes["rpc.method"] === "Set" &&
      s.resourceAttributes["service.instance.id"] === "r1"
    const instanceOnR1 = (s: ReceivedSpan) =>
      s.name === `popuc.instance ${response.instance}` && s.attributes["popuc.replica"] === "r1"
    const spans = await Effect.runPromise(
      receiver
        .waitForSpans((all) => all.some(isSetSpan) && all.some(instanceOnR1))
        .pipe(
          Effect.timeout("20 seconds"),
          Effect.catchAll(() =>
            Effect.flatMap(receiver.spans, (all) =>
              Effect.die(
                new Error(
                  `no Set span linked to instance ${response.instance} on r1; received:\n${all
                    .map(
                      (s) =>
                        `${s.resourceAttributes["service.instance.id"]} ${s.kind} ${s.name} ${JSON.stringify(s.attributes)}`
                    )
                    .slice(0, 40)
                    .join("\n")}`
                )
              )
            )
          )
        )
    )
    const set = spans.find(isSetSpan)
    const instance = spans.find(instanceOnR1)
    expect(set).toBeDefined()
    expect(instance).toBeDefined()
    expect(instance!.attributes["popuc.instance"]).toBe(response.instance)
    expect(instance!.attributes["popuc.rounds"]).toBeGreaterThanOrEqual(2)
    expect(instance!.attributes["popuc.decided_set_size"]).toBeGreaterThanOrEqual(1)
    // Arrays arrive JSON-encoded (a late message on a loaded machine can make a suspect: no fixed value).
    expect(Array.isArray(JSON.parse(String(instance!.attributes["popuc.suspects"])))).toBe(true)
    expect(set!.links).toContainEqual({ traceId: instance!.traceId, spanId: instance!.spanId })
    const rounds = spans.filter((s) => s.parentSpanId === instance!.spanId)
    expect(rounds.map((s) => s.name).sort()).toEqual(
      Array.from({ length: Number(instance!.attributes["popuc.rounds"]) }, (_, i) => `popuc.round ${i + 1}`)
    )
  }, 60_000)
})
