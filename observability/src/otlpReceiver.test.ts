import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { decodeExportRequest, startOtlpReceiver } from "./otlpReceiver.js"

const post = (url: string, body: string, headers: Record<string, string>) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", body, headers })
    return { status: response.status, body: await response.text() }
  })

/** OTLP JSON as a protobuf-JSON encoder writes it: base64 ids, int64 as string, enum names. */
const base64Request = JSON.stringify({
  resourceSpans: [
    {
      resource: { attributes: [{ key: "service.name", value: { stringValue: "other" } }] },
      scopeSpans: [
        {
          scope: { name: "x" },
          spans: [
            {
              traceId: Buffer.from("4bf92f3577b34da6a3ce929d0e0e4736", "hex").toString("base64"),
              spanId: Buffer.from("00f067aa0ba902b7", "hex").toString("base64"),
              parentSpanId: "",
              name: "op",
              kind: "SPAN_KIND_PRODUCER",
              links: [
                {
                  traceId: Buffer.from("0af7651916cd43dd8448eb211c80319c", "hex").toString("base64"),
                  spanId: Buffer.from("b7ad6b7169203331", "hex").toString("base64")
                }
              ],
              attributes: [
                { key: "n", value: { intValue: "42" } },
                { key: "d", value: { doubleValue: 1.5 } },
                { key: "b", value: { boolValue: true } },
                { key: "a", value: { arrayValue: { values: [{ stringValue: "x" }, { intValue: 1 }] } } }
              ]
            }
          ]
        }
      ]
    }
  ]
})

describe("startOtlpReceiver", () => {
  it.scopedLive("records spans from OTLP JSON, normalising base64 ids to lowercase hex", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver()
      const response = yield* post(receiver.tracesUrl, base64Request, { "Content-Type": "application/json" })
      expect(response).toEqual({ status: 200, body: "{}" })
      expect(yield* receiver.spans).toEqual([
        {
          traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
          spanId: "00f067aa0ba902b7",
          parentSpanId: undefined,
          name: "op",
          kind: "producer",
          serviceName: "other",
          attributes: { n: 42, d: 1.5, b: true, a: '["x",1]' },
          resourceAttributes: { "service.name": "other" },
          links: [{ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" }]
        }
      ])
      expect(yield* receiver.waitForSpans((spans) => spans.length === 1)).toHaveLength(1)
    })
  )

  it.scopedLive("rejects protobuf with 415 and an explanation, other paths with 404, bad JSON with 400", () =>
    Effect.gen(function* () {
      const receiver = yield* startOtlpReceiver()
      const protobuf = yield* post(receiver.tracesUrl, "\x0a\x00", { "Content-Type": "application/x-protobuf" })
      expect(protobuf.status).toBe(415)
      expect(protobuf.body).toContain("application/json")
      expect((yield* post(`${receiver.url}/v1/logs`, "{}", { "Content-Type": "application/json" })).status).toBe(404)
      expect((yield* post(receiver.tracesUrl, "{nope", { "Content-Type": "application/json" })).status).toBe(400)
      expect(yield* receiver.requests).toBe(0)
    })
  )

  it("decodeExportRequest rejects ids of the wrong size", () => {
    const bad = JSON.stringify({
      resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "ab", spanId: "cd", name: "x" }] }] }]
    })
    expect(Either.isLeft(decodeExportRequest(bad))).toBe(true)
    expect(decodeExportRequest("{}")).toEqual(Either.right([]))
  })
})
