/**
 * Received header blocks: a repeated block is decoded once and reused; a block with a trace context, a message
 * without headers and a message nats.js did not build are read as nats.js reads them.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Msg, MsgHdrsImpl } from "@nats-io/nats-core"
import { MsgImpl } from "@nats-io/nats-core/internal"
import { FixedHeaders } from "./bus.js"
import { ReceivedHeaders } from "./nats-headers.js"

const utf8 = new TextEncoder()
const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

/** A message as nats.js's parser builds it: the header block, then the payload, in one buffer. */
const received = (headers: ReadonlyArray<readonly [string, string]> | undefined, payload = new Uint8Array([7])) => {
  let block: Uint8Array = new Uint8Array(0)
  if (headers !== undefined) {
    const h = new MsgHdrsImpl()
    for (const [k, v] of headers) h.set(k, v)
    block = h.encode()
  }
  const data = new Uint8Array(block.length + payload.length)
  data.set(block)
  data.set(payload, block.length)
  const arg = { subject: utf8.encode("s"), sid: 1, hdr: headers === undefined ? -1 : block.length, size: data.length }
  return new MsgImpl(arg, data, { publish: () => {} } as never)
}

describe("ReceivedHeaders", () => {
  it("decodes a repeated block once and reuses it", () => {
    const cache = new ReceivedHeaders()
    const first = cache.of(received([["reef-type", "reef.v1.A"]]))
    const second = cache.of(received([["reef-type", "reef.v1.A"]], new Uint8Array([1, 2, 3])))
    const other = cache.of(received([["reef-type", "reef.v1.B"]]))
    expect(Object.fromEntries(first)).toEqual({ "reef-type": "reef.v1.A" })
    expect(second).toBe(first)
    expect(first).toBeInstanceOf(FixedHeaders)
    expect(Object.fromEntries(other)).toEqual({ "reef-type": "reef.v1.B" })
  })

  it("reads a block with a trace context afresh every time", () => {
    const cache = new ReceivedHeaders()
    const block: ReadonlyArray<readonly [string, string]> = [
      ["reef-type", "reef.v1.A"],
      ["traceparent", TRACEPARENT]
    ]
    const first = cache.of(received(block))
    expect(Object.fromEntries(first)).toEqual({ "reef-type": "reef.v1.A", traceparent: TRACEPARENT })
    expect(cache.of(received(block))).not.toBe(first)
  })

  it("keeps the last blocks it saw, up to its capacity", () => {
    const cache = new ReceivedHeaders(2)
    const a = cache.of(received([["t", "a"]]))
    cache.of(received([["t", "b"]]))
    cache.of(received([["t", "c"]]))
    const again = cache.of(received([["t", "a"]]))
    expect(again).not.toBe(a)
    expect(Object.fromEntries(again)).toEqual({ t: "a" })
  })

  it("reads messages without headers and messages nats.js did not build", () => {
    const cache = new ReceivedHeaders()
    expect(cache.of(received(undefined)).size).toBe(0)
    const h = new MsgHdrsImpl()
    h.set("reef-type", "reef.v1.C")
    const foreign = { headers: h } as unknown as Msg
    expect(Object.fromEntries(cache.of(foreign))).toEqual({ "reef-type": "reef.v1.C" })
    expect(cache.of({ headers: undefined } as unknown as Msg).size).toBe(0)
  })
})
