/** NATS header names the kernel reads and writes (exact spellings: NATS headers are case-sensitive). */

/** Fully qualified protobuf type name of the payload, e.g. `reef.v1.PingRequest`. */
export const TYPE_HEADER = "reef-type"
/** Present (value "1") on a reply whose payload is a `reef.v1.ErrorDetail`. */
export const ERROR_HEADER = "reef-error"
/** W3C trace context of the sender's span (one name, owned by @reef/observability). */
export { TRACEPARENT_HEADER } from "@reef/observability/tracing"
