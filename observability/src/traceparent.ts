/**
 * W3C Trace Context `traceparent` header: format and parse, nothing else.
 *
 * Reef carries trace context between actors in NATS message headers. This module is pure (its only import is
 * `effect/Option`, a plain data type) so protocol cores and the kernel can use it without loading the
 * OpenTelemetry SDK; it is also published alone as `@reef/observability/traceparent`.
 *
 * Spec: https://www.w3.org/TR/trace-context/#traceparent-header
 *   traceparent = version "-" trace-id "-" parent-id "-" trace-flags
 *   version 2 hex (ff is invalid), trace-id 32 hex (not all zero), parent-id 16 hex (not all zero),
 *   trace-flags 2 hex (bit 0 = sampled); all hex digits lowercase.
 */
import * as Option from "effect/Option"

/** The part of a span's identity that crosses process boundaries. Ids are lowercase hex. */
export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string
  /** 16 lowercase hex digits, not all zero: the id of the span that is the remote parent. */
  readonly spanId: string
  /** Whether the caller recorded (sampled) its span; bit 0 of trace-flags. */
  readonly sampled: boolean
}

/** Name of the header, as written by this module (W3C header names are case-insensitive). */
export const TRACEPARENT_HEADER = "traceparent"

/** The only version this module emits. */
const VERSION_00 = "00"
/** Length of a version-00 header; later versions may append "-<more>" after it. */
const VERSION_00_LENGTH = 55

const VERSION = /^[0-9a-f]{2}$/
const TRACE_ID = /^[0-9a-f]{32}$/
const SPAN_ID = /^[0-9a-f]{16}$/
const FLAGS = /^[0-9a-f]{2}$/
const ALL_ZERO = /^0+$/

const SAMPLED_FLAG = 0x01

/** True when `traceId` is 32 lowercase hex digits and not all zero. */
export const isValidTraceId = (traceId: string): boolean => TRACE_ID.test(traceId) && !ALL_ZERO.test(traceId)

/** True when `spanId` is 16 lowercase hex digits and not all zero. */
export const isValidSpanId = (spanId: string): boolean => SPAN_ID.test(spanId) && !ALL_ZERO.test(spanId)

/**
 * Formats a version-00 `traceparent` value: `00-<traceId>-<spanId>-01` (sampled) or `...-00`.
 * The ids must already be valid (Effect and OpenTelemetry generate lowercase hex ids of the right length);
 * this function does not check them so it stays cheap on the send path.
 */
export const formatTraceparent = (context: TraceContext): string =>
  `${VERSION_00}-${context.traceId}-${context.spanId}-${context.sampled ? "01" : "00"}`

/**
 * Parses a `traceparent` value; `Option.none()` when it is missing or malformed.
 *
 * Accepts version 00 exactly (55 characters) and, as the spec asks for forward compatibility, higher versions
 * whose first 55 characters have the version-00 layout and that continue, if at all, with "-". Version ff,
 * uppercase hex, all-zero ids and wrong lengths are rejected. Surrounding spaces/tabs are ignored.
 */
export const parseTraceparent = (header: string | null | undefined): Option.Option<TraceContext> => {
  if (header === null || header === undefined) return Option.none()
  const value = header.trim()
  if (value.length < VERSION_00_LENGTH) return Option.none()

  const version = value.slice(0, 2)
  if (!VERSION.test(version) || version === "ff") return Option.none()
  if (version === VERSION_00 && value.length !== VERSION_00_LENGTH) return Option.none()
  if (value.length > VERSION_00_LENGTH && value[VERSION_00_LENGTH] !== "-") return Option.none()

  if (value[2] !== "-" || value[35] !== "-" || value[52] !== "-") return Option.none()
  const traceId = value.slice(3, 35)
  const spanId = value.slice(36, 52)
  const flags = value.slice(53, 55)
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId) || !FLAGS.test(flags)) return Option.none()

  return Option.some({ traceId, spanId, sampled: (Number.parseInt(flags, 16) & SAMPLED_FLAG) === SAMPLED_FLAG })
}
