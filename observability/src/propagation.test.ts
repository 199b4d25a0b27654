import { describe, expect, it } from "vitest"

describe("externalSpanFromTraceContext without the OpenTelemetry module", () => {
  it("builds the same trace-flags context as @effect/opentelemetry's makeExternalSpan", async () => {
    const { makeExternalSpan } = await import("@effect/opentelemetry/Tracer")
    const { externalSpanFromTraceContext: build } = await import("./propagation.js")
    for (const sampled of [true, false]) {
      const ids = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" }
      const ours = build({ ...ids, sampled })
      const theirs = makeExternalSpan({ ...ids, traceFlags: sampled ? 1 : 0 })
      expect([...ours.context.unsafeMap.entries()]).toEqual([...theirs.context.unsafeMap.entries()])
    }
  })
})
