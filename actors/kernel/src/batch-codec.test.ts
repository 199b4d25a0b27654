import { CounterAdd, CounterGet, EnvelopeBatch, PingRequest } from "@reef/proto"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { type BatchTarget, decodeBatch, encodeBatch } from "./batch-codec.js"
import { encodeMessage } from "./codec.js"

const adds: BatchTarget = { request: CounterAdd, batched: true }
const gets: BatchTarget = { request: CounterGet, batched: false }
const targets = new Map<string, BatchTarget>([
  [CounterAdd.$type, adds],
  [CounterGet.$type, gets]
])
const resolve = (type: string) => targets.get(type)
const LIMIT = 1024 * 1024

const entry = (type: string, payload: Uint8Array) => ({ type, payload })
const add = (amount: number) => entry(CounterAdd.$type, encodeMessage(CounterAdd, { key: "k", amount }))
const get = (key: string) => entry(CounterGet.$type, encodeMessage(CounterGet, { key }))
const batchOf = (...entries: Array<{ type: string; payload: Uint8Array }>) => encodeMessage(EnvelopeBatch, { entries })

const decoded = (bytes: Uint8Array) => Either.getOrThrow(decodeBatch(bytes, "s", resolve, LIMIT))
const shape = (bytes: Uint8Array) =>
  decoded(bytes).groups.map((g) => ({ type: g.target.request.$type, value: g.value, count: g.count }))

describe("batch codec", () => {
  it("encodes what the generated EnvelopeBatch codec reads back, entry by entry", () => {
    const messages = [1, 2, 300].map((amount) => ({ key: `k${amount}`, amount }))
    const batch = EnvelopeBatch.decode(encodeBatch(CounterAdd, messages))
    expect(batch.entries.map((e) => e.type)).toEqual([CounterAdd.$type, CounterAdd.$type, CounterAdd.$type])
    expect(batch.entries.map((e) => CounterAdd.decode(e.payload))).toEqual(messages)
  })

  it("groups consecutive entries of a batched target into one call and keeps the order", () => {
    const bytes = batchOf(add(1), add(2), get("a"), get("b"), add(3))
    expect(shape(bytes)).toEqual([
      {
        type: CounterAdd.$type,
        value: [
          { key: "k", amount: 1 },
          { key: "k", amount: 2 }
        ],
        count: 2
      },
      { type: CounterGet.$type, value: { key: "a" }, count: 1 },
      { type: CounterGet.$type, value: { key: "b" }, count: 1 },
      { type: CounterAdd.$type, value: [{ key: "k", amount: 3 }], count: 1 }
    ])
    expect(decoded(bytes).count).toBe(5)
  })

  it("decodes a large batch of its own encoding", () => {
    const messages = Array.from({ length: 5000 }, (_, i) => ({ key: `key-${i % 7}`, amount: i }))
    const result = decoded(encodeBatch(CounterAdd, messages))
    expect(result.groups.length).toBe(1)
    expect(result.groups[0]!.value).toEqual(messages)
    expect(result.rejected).toEqual([])
  })

  it("refuses an unknown type, malformed bytes and a nested batch one by one and keeps the rest", () => {
    const bytes = batchOf(
      add(1),
      entry("reef.v1.Nope", new Uint8Array([1])),
      entry(CounterAdd.$type, new Uint8Array([0x0a, 100, 1])),
      entry(EnvelopeBatch.$type, batchOf(add(5))),
      add(2)
    )
    const result = decoded(bytes)
    expect(result.rejected.map((e) => e._tag)).toEqual([
      "UnknownTypeError",
      "MalformedMessageError",
      "MalformedMessageError"
    ])
    expect(result.rejected[0]!.message).toContain("reef.v1.Nope")
    // A refused entry ends a group: the two adds around it are two calls.
    expect(result.groups.map((g) => g.value)).toEqual([[{ key: "k", amount: 1 }], [{ key: "k", amount: 2 }]])
  })

  it("refuses a payload whose fields run past its own entry, without reading the next entry", () => {
    // CounterGet key field claiming 5 bytes inside a 3-byte payload; the next entry's bytes follow it.
    const bytes = batchOf(entry(CounterGet.$type, new Uint8Array([0x0a, 5, 0x61])), get("after"))
    const result = decoded(bytes)
    expect(result.rejected.map((e) => e._tag)).toEqual(["MalformedMessageError"])
    expect(result.groups.map((g) => g.value)).toEqual([{ key: "after" }])
  })

  it("refuses a batch with broken framing whole", () => {
    const bytes = batchOf(add(1), add(2))
    const truncated = decodeBatch(bytes.subarray(0, bytes.length - 2), "s", resolve, LIMIT)
    expect(Either.isLeft(truncated) && truncated.left._tag).toBe("MalformedMessageError")
    const garbage = decodeBatch(new Uint8Array([0x0a, 200, 1, 2]), "s", resolve, LIMIT)
    expect(Either.isLeft(garbage) && garbage.left._tag).toBe("MalformedMessageError")
  })

  it("refuses an oversized batch before reading it", () => {
    const result = decodeBatch(batchOf(add(1), add(2)), "s", resolve, 8)
    expect(Either.isLeft(result) && result.left._tag).toBe("OversizedMessageError")
  })

  it("skips fields it does not know, as protobuf readers must", () => {
    // An entry with an unknown varint field (3) after its payload, and an unknown batch field (2).
    const ping = encodeMessage(PingRequest, { relay: [], payload: "x" })
    const unknownEntryField = new Uint8Array([0x18, 7])
    const entryBytes = new Uint8Array([
      ...encodeMessage(EnvelopeBatch, { entries: [get("a")] }).subarray(2),
      ...unknownEntryField
    ])
    const bytes = new Uint8Array([0x0a, entryBytes.length, ...entryBytes, 0x12, ping.length, ...ping])
    const result = decoded(bytes)
    expect(result.rejected).toEqual([])
    expect(result.groups.map((g) => g.value)).toEqual([{ key: "a" }])
  })
})
