import { describe, expect, it } from "vitest"
import { FRAME_HEADER_BYTES, frameRecord, unframeRecords } from "./framing.js"

const enc = (s: string) => new TextEncoder().encode(s)

describe("record framing in a byte stream", () => {
  const stream = Buffer.concat([frameRecord(enc("one")), frameRecord(enc("")), frameRecord(enc("three"))])

  it("finds each record, its position and where the next starts", () => {
    const r = unframeRecords(stream, 100, 10, 1024)
    expect(r._tag).toBe("Records")
    if (r._tag !== "Records") return
    expect(r.records.map((x) => new TextDecoder().decode(x.bytes))).toEqual(["one", "", "three"])
    expect(r.records.map((x) => x.position)).toEqual([
      100,
      100 + FRAME_HEADER_BYTES + 3,
      100 + 2 * FRAME_HEADER_BYTES + 3
    ])
    expect(r.records.at(-1)!.next).toBe(100 + stream.byteLength)
  })

  it("leaves a record cut off by the chunk's end for the next read, and says how long it is", () => {
    const r = unframeRecords(stream.subarray(0, FRAME_HEADER_BYTES + 1), 0, 10, 1024)
    expect(r).toEqual({ _tag: "Records", records: [], firstRecordBytes: FRAME_HEADER_BYTES + 3 })
  })

  it("reports a flipped byte as corruption, never as data", () => {
    const bad = Buffer.from(stream)
    bad[FRAME_HEADER_BYTES + 1] ^= 0xff
    expect(unframeRecords(bad, 0, 10, 1024)).toMatchObject({ _tag: "Corrupt", position: 0 })
  })

  it("reports an impossible length as corruption", () => {
    const bad = Buffer.from(stream)
    bad.writeUInt32BE(1 << 30, 0)
    expect(unframeRecords(bad, 0, 10, 1024)).toMatchObject({
      _tag: "Corrupt",
      reason: expect.stringContaining("length")
    })
  })
})
