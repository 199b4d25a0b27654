/**
 * Every protobuf message in @reef/proto, decoded the way a role decodes what it receives (CodecRegistry: size
 * check, type lookup, parse): hostile bytes give a MalformedMessageError or OversizedMessageError, or a value
 * that re-encodes to bytes decoding to the same value. Inputs are shared by all types (fuzzDecoders).
 */
import * as proto from "@reef/proto"
import * as Either from "effect/Either"
import { expect, it } from "vitest"
import { type Codec, CodecRegistry } from "../codec.js"
import { MalformedMessageError, OversizedMessageError } from "../errors.js"
import { type FuzzTarget, fc, fuzzDecoders, fuzzRuns, protobufShaped } from "./index.js"

const codecs = (Object.values(proto) as Array<unknown>).filter(
  (v): v is Codec<unknown> =>
    typeof v === "object" && v !== null && typeof (v as { $type?: unknown }).$type === "string" && "decode" in v
)

/** Small so that a payload limit is part of what is fuzzed. */
const LIMIT_BYTES = 4096
const registry = new CodecRegistry(codecs, LIMIT_BYTES)

/** Valid encodings with content: protobuf-shaped bytes the type accepts, re-encoded. */
const seedsOf = (codec: Codec<unknown>): Array<Uint8Array> => {
  const seeds: Array<Uint8Array> = []
  for (const bytes of fc.sample(protobufShaped(), { numRuns: 400, seed: 7 })) {
    try {
      const encoded = codec.encode(codec.decode(bytes)).finish()
      if (encoded.length > 0) seeds.push(encoded)
    } catch {}
    if (seeds.length === 3) break
  }
  return seeds
}

const refused = (outcome: unknown) =>
  Either.isEither(outcome) &&
  Either.isLeft(outcome) &&
  (outcome.left instanceof MalformedMessageError || outcome.left instanceof OversizedMessageError)

const targetOf = (codec: Codec<unknown>): FuzzTarget<Either.Either<unknown, unknown>> => ({
  name: `protobuf ${codec.$type}`,
  decode: (bytes) => registry.decode(codec.$type, bytes, "fuzz"),
  refused,
  check: (decoded) => {
    const encoded = codec.encode(Either.getOrThrow(decoded)).finish()
    const again = codec.encode(codec.decode(encoded)).finish()
    return Buffer.compare(encoded, again) === 0 ? undefined : "its encoding decodes to another value"
  },
  seeds: seedsOf(codec),
  protobuf: true
})

it("finds every message type of @reef/proto", () => {
  expect(codecs.length).toBeGreaterThan(100)
  expect(codecs.map((c) => c.$type)).toContain("reef.v1.PopucWire")
})

it("decodes hostile bytes of every message type into a typed refusal or a value that re-encodes to itself", () => {
  const reports = fuzzDecoders(codecs.map(targetOf), fuzzRuns())
  for (const r of reports) expect(r.accepted + r.refused).toBe(r.cases)
  const accepted = reports.reduce((n, r) => n + r.accepted, 0)
  console.log(`fuzz: ${reports.length} protobuf types x ${reports[0]!.cases} cases, ${accepted} accepted in all`)
}, 600_000)
