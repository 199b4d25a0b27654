/** NATS header names the kernel reads and writes (exact spellings: NATS headers are case-sensitive). */

/** Fully qualified protobuf type name of the payload, e.g. `reef.v1.PingRequest`. */
export const TYPE_HEADER = "reef-type"
/** Present (value "1") on a reply whose payload is a `reef.v1.ErrorDetail`. */
export const ERROR_HEADER = "reef-error"
/** W3C trace context of the sender's span (one name, owned by @reef/observability). */
export { TRACEPARENT_HEADER } from "@reef/observability/tracing"
/**
 * Set by the receiving kernel (never by a sender) on a message whose NATS header block does not parse; its
 * value says why. The message is refused as malformed instead of throwing inside the NATS callback.
 */
export const MALFORMED_HEADERS_HEADER = "reef-malformed-headers"
