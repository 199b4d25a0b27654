import { BinaryWriter } from "@bufbuild/protobuf/wire"
import { GetRequest, KvRequests } from "@reef/proto"
import { describe, expect, it } from "vitest"
import { isWellFormed, StrictReader } from "./strict-utf8.js"

/** A GetRequest whose key field holds `bytes` as they are (not necessarily UTF-8). */
const rawGet = (bytes: ReadonlyArray<number>) => new BinaryWriter().uint32(10).bytes(new Uint8Array(bytes)).finish()

describe("strict UTF-8 in requests", () => {
  it("two distinct invalid keys do not decode to one key: both are marked ill-formed", () => {
    const a = GetRequest.decode(new StrictReader(rawGet([0x6b, 0xff])))
    const b = GetRequest.decode(new StrictReader(rawGet([0x6b, 0xfe])))
    // The ordinary decoder makes both "k\uFFFD".
    expect(GetRequest.decode(rawGet([0x6b, 0xff])).key).toBe(GetRequest.decode(rawGet([0x6b, 0xfe])).key)
    expect(isWellFormed(a.key)).toBe(false)
    expect(isWellFormed(b.key)).toBe(false)
  })

  it("valid UTF-8, a real U+FFFD included, decodes as it is", () => {
    const key = "clé-\uFFFD-鍵-😀"
    const decoded = GetRequest.decode(new StrictReader(GetRequest.encode({ key }).finish()))
    expect(decoded.key).toBe(key)
    expect(isWellFormed(decoded.key)).toBe(true)
  })

  it("marks the invalid string inside a nested message and leaves its neighbours alone", () => {
    const good = GetRequest.encode({ key: "fine" }).finish()
    const bad = rawGet([0xc3])
    const request = (id: number, get: Uint8Array) => {
      const w = new BinaryWriter().uint32(8).uint64(id).uint32(18).bytes(get)
      return w.finish()
    }
    const frame = new BinaryWriter().uint32(10).bytes(request(1, good)).uint32(10).bytes(request(2, bad)).finish()
    const decoded = KvRequests.decode(new StrictReader(frame))
    const keys = decoded.requests.map((r) => (r.op?.$case === "get" ? r.op.value.key : undefined))
    expect(keys[0]).toBe("fine")
    expect(isWellFormed(keys[1]!)).toBe(false)
  })

  it("a JavaScript string with a lone surrogate is not well-formed", () => {
    expect(isWellFormed("a\uDC00b")).toBe(false)
    expect(isWellFormed("a😀b")).toBe(true)
  })
})
