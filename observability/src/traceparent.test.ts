import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import { formatTraceparent, parseTraceparent } from "./traceparent.js"

// Example from the W3C Trace Context spec, section 3.2.
const SPEC_EXAMPLE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const SPAN_ID = "00f067aa0ba902b7"

describe("traceparent", () => {
  it("parses the spec example", () => {
    expect(parseTraceparent(SPEC_EXAMPLE)).toEqual(Option.some({ traceId: TRACE_ID, spanId: SPAN_ID, sampled: true }))
  })

  it("round-trips sampled and unsampled contexts", () => {
    for (const sampled of [true, false]) {
      const context = { traceId: TRACE_ID, spanId: SPAN_ID, sampled }
      const header = formatTraceparent(context)
      expect(header).toBe(`00-${TRACE_ID}-${SPAN_ID}-${sampled ? "01" : "00"}`)
      expect(parseTraceparent(header)).toEqual(Option.some(context))
    }
  })

  it("reads only bit 0 of trace-flags as sampled", () => {
    expect(Option.map(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-03`), (c) => c.sampled)).toEqual(Option.some(true))
    expect(Option.map(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-02`), (c) => c.sampled)).toEqual(Option.some(false))
  })

  it("accepts a higher version with extra fields, as the spec asks", () => {
    expect(Option.isSome(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01-what-the-future-holds`))).toBe(true)
    expect(Option.isSome(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-01`))).toBe(true)
  })

  it("ignores surrounding whitespace", () => {
    expect(Option.isSome(parseTraceparent(` ${SPEC_EXAMPLE}\t`))).toBe(true)
  })

  const malformed: ReadonlyArray<readonly [string, string | undefined | null]> = [
    ["missing", undefined],
    ["null", null],
    ["empty", ""],
    ["version ff", `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ["version 00 with extra data", `${SPEC_EXAMPLE}-extra`],
    ["higher version glued to extra data", `01-${TRACE_ID}-${SPAN_ID}-01x`],
    ["non-hex version", `0x-${TRACE_ID}-${SPAN_ID}-01`],
    ["uppercase trace id", `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ["uppercase span id", `00-${TRACE_ID}-00F067AA0BA902B7-01`],
    ["uppercase flags", `00-${TRACE_ID}-${SPAN_ID}-0A`],
    ["all-zero trace id", `00-${"0".repeat(32)}-${SPAN_ID}-01`],
    ["all-zero span id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["short trace id", `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ["long span id", `00-${TRACE_ID}-${SPAN_ID}0-01`],
    ["short flags", `00-${TRACE_ID}-${SPAN_ID}-1`],
    ["wrong separator", `00_${TRACE_ID}-${SPAN_ID}-01`],
    ["non-hex trace id", `00-${"g".repeat(32)}-${SPAN_ID}-01`],
    ["truncated", SPEC_EXAMPLE.slice(0, 40)]
  ]
  for (const [label, header] of malformed) {
    it(`rejects ${label}`, () => {
      expect(parseTraceparent(header)).toEqual(Option.none())
    })
  }
})
