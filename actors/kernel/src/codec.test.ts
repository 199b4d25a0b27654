import { PingRequest } from "@reef/proto"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { CodecRegistry, encodeChecked, encodeMessage } from "./codec.js"

const ping = PingRequest.fromPartial({ payload: "hello", target: { cluster: "c", role: "r", id: "1" } })

describe("CodecRegistry", () => {
  const registry = new CodecRegistry([PingRequest], 1024)

  it("decodes a registered type by its fully qualified name", () => {
    const decoded = registry.decode("reef.v1.PingRequest", encodeMessage(PingRequest, ping), "s")
    expect(Either.getOrThrow(decoded)).toEqual(ping)
  })

  it("answers an unknown type with UnknownTypeError naming it", () => {
    const decoded = registry.decode("reef.v1.Nope", new Uint8Array([1, 2]), "reef.c.r.1")
    const error = Either.getLeft(decoded).pipe((o) => (o._tag === "Some" ? o.value : undefined))
    expect(error?._tag).toBe("UnknownTypeError")
    expect(error?.message).toContain("reef.v1.Nope")
  })

  it("answers bytes that are not protobuf with MalformedMessageError", () => {
    // field 1, wire type 2 (length-delimited) claiming 100 bytes that are not there
    const decoded = registry.decode("reef.v1.PingRequest", new Uint8Array([0x0a, 100, 1]), "s")
    expect(Either.isLeft(decoded) && decoded.left._tag).toBe("MalformedMessageError")
  })

  it("rejects an oversized payload before parsing it", () => {
    const decoded = registry.decode("reef.v1.PingRequest", new Uint8Array(2048), "s")
    expect(Either.isLeft(decoded) && decoded.left._tag).toBe("OversizedMessageError")
  })

  it("refuses to encode past the limit on the sending side", () => {
    const big = PingRequest.fromPartial({ payload: "x".repeat(2000) })
    const encoded = encodeChecked(PingRequest, big, 1024)
    expect(Either.isLeft(encoded) && encoded.left.sizeBytes).toBeGreaterThan(1024)
  })
})
