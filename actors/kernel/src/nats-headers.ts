/**
 * Kernel headers in their NATS form, both ways. Sending: a fixed header set (a message type's) is encoded once
 * and its bytes reused. Receiving: a header block seen recently is not decoded again, because a sender's fixed
 * header set arrives as the same bytes every time; nats.js decodes every block as text, splits its lines and
 * builds a map per message, which cost an ask more than its protobuf work.
 */
import { type Msg, type MsgHdrs, MsgHdrsImpl, headers as natsHeaders } from "@nats-io/nats-core"
import { MsgImpl } from "@nats-io/nats-core/internal"
import { TRACEPARENT_HEADER } from "@reef/observability/tracing"
import { FixedHeaders, type Headers } from "./bus.js"
import { MALFORMED_HEADERS_HEADER } from "./headers.js"

/** A fixed header set's NATS form, encoded once on first use (nats.js encodes headers on every publish). */
class EncodedOnce extends MsgHdrsImpl {
  private bytes: Uint8Array | undefined

  override encode(): Uint8Array {
    if (this.bytes === undefined) this.bytes = super.encode()
    return this.bytes
  }
}

const encodedFixed = new WeakMap<FixedHeaders, MsgHdrs>()

const natsHeadersOf = (headers: Headers, target: MsgHdrs): MsgHdrs => {
  for (const [k, v] of headers) target.set(k, v)
  return target
}

export const toNatsHeaders = (headers: Headers | undefined): MsgHdrs | undefined => {
  if (headers === undefined || headers.size === 0) return undefined
  if (!(headers instanceof FixedHeaders)) return natsHeadersOf(headers, natsHeaders())
  let encoded = encodedFixed.get(headers)
  if (encoded === undefined) {
    encoded = natsHeadersOf(headers, new EncodedOnce())
    encodedFixed.set(headers, encoded)
  }
  return encoded
}

export const NO_HEADERS: Headers = new FixedHeaders([])

/** The kernel's view of decoded NATS headers: the first value of each name. */
const fromNatsHeaders = (h: MsgHdrs): Map<string, string> => {
  const out = new Map<string, string>()
  // The decoded headers' own map: MsgHdrs.get builds two arrays per lookup.
  if (h instanceof MsgHdrsImpl) {
    for (const [k, values] of h.headers) out.set(k, values[0] ?? "")
    return out
  }
  for (const k of h.keys()) out.set(k, h.get(k))
  return out
}

/** A service endpoint hands over its own wrapper of the received message; the message itself is inside. */
const receivedMsg = (m: Msg): Msg => {
  const inner = (m as { readonly msg?: unknown }).msg
  return inner instanceof MsgImpl ? inner : m
}

const sameBytes = (a: Uint8Array, b: Uint8Array, length: number): boolean => {
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return false
  return true
}

interface Block {
  readonly bytes: Uint8Array
  readonly headers: Headers
}

/**
 * Headers of received messages, decoded once per distinct header block among the last `capacity` kept. A block
 * with a trace context is never kept (every message has its own); it is decoded as nats.js does.
 */
export class ReceivedHeaders {
  private readonly blocks: Array<Block> = []
  private next = 0

  constructor(private readonly capacity = 16) {}

  of(received: Msg): Headers {
    const m = receivedMsg(received)
    if (!(m instanceof MsgImpl)) return m.headers === undefined ? NO_HEADERS : fromNatsHeaders(m.headers)
    const length = m._msg.hdr
    if (length <= 0) return NO_HEADERS
    const raw = m._rdata
    for (const block of this.blocks) {
      if (block.bytes.length === length && sameBytes(block.bytes, raw, length)) return block.headers
    }
    let headers: Map<string, string>
    try {
      const decoded = m.headers
      if (decoded === undefined) return NO_HEADERS
      headers = fromNatsHeaders(decoded)
    } catch (cause) {
      // nats.js throws on a header name it would not send itself (found by fuzzing): any raw client can send one.
      return new FixedHeaders([[MALFORMED_HEADERS_HEADER, String((cause as Error)?.message ?? cause)]])
    }
    if (headers.has(TRACEPARENT_HEADER)) return headers
    const block = { bytes: raw.slice(0, length), headers: new FixedHeaders(headers) }
    this.blocks[this.next] = block
    this.next = (this.next + 1) % this.capacity
    return block.headers
  }
}
