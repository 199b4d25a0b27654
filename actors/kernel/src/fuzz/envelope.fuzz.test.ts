/**
 * The envelope's own decoders: a batch (`decodeBatch`, one pass over an EnvelopeBatch) and a received NATS
 * header block (`ReceivedHeaders`). A batch that decodes must agree with the generated EnvelopeBatch codec
 * entry by entry (the reference model): every delivered value is what its entry's payload decodes to, in order.
 */
import { isDeepStrictEqual } from "node:util"
import type { MsgArg } from "@nats-io/nats-core/internal"
import { MsgImpl } from "@nats-io/nats-core/internal"
import { CounterAdd, CounterGet, EnvelopeBatch, Heartbeat, PingRequest } from "@reef/proto"
import * as Either from "effect/Either"
import { expect, it } from "vitest"
import { type BatchTarget, decodeBatch, encodeBatch } from "../batch-codec.js"
import { decodeWhole, encodeMessage } from "../codec.js"
import { MalformedMessageError, OversizedMessageError } from "../errors.js"
import { MALFORMED_HEADERS_HEADER } from "../headers.js"
import { ReceivedHeaders } from "../nats-headers.js"
import { fuzzDecoder, fuzzRuns } from "./index.js"

const targets = new Map<string, BatchTarget>([
  [CounterAdd.$type, { request: CounterAdd, batched: true }],
  [CounterGet.$type, { request: CounterGet, batched: false }],
  [Heartbeat.$type, { request: Heartbeat, batched: true }]
])
const LIMIT_BYTES = 8192

const batchSeeds = [
  encodeBatch(CounterAdd, [
    { key: "k", amount: 1 },
    { key: "k2", amount: -5 }
  ]),
  encodeMessage(EnvelopeBatch, {
    entries: [
      { type: CounterGet.$type, payload: Buffer.from(encodeMessage(CounterGet, { key: "a" })) },
      { type: PingRequest.$type, payload: Buffer.from([8, 1]) },
      { type: CounterAdd.$type, payload: Buffer.from(encodeMessage(CounterAdd, { key: "b", amount: 3 })) },
      { type: EnvelopeBatch.$type, payload: Buffer.alloc(0) }
    ]
  }),
  encodeBatch(Heartbeat, [
    Heartbeat.fromPartial({ address: { cluster: "c", role: "replica", id: "r1" }, incarnation: "i" })
  ])
]

/** What the generated codec makes of the same bytes: the accepted entries' values, in order. */
const reference = (bytes: Uint8Array): Array<unknown> | undefined => {
  let batch: EnvelopeBatch
  try {
    batch = EnvelopeBatch.decode(bytes)
  } catch {
    return undefined
  }
  return batch.entries.flatMap((e) => {
    const target = targets.get(e.type)
    if (target === undefined || e.payload.length > LIMIT_BYTES) return []
    try {
      return [decodeWhole(target.request, e.payload)]
    } catch {
      return []
    }
  })
}

it("decodes a hostile batch into a typed refusal or the entries the generated codec finds", () => {
  const report = fuzzDecoder({
    name: "envelope batch (decodeBatch)",
    decode: (bytes) => decodeBatch(bytes, "fuzz", (type) => targets.get(type), LIMIT_BYTES),
    refused: (o) =>
      Either.isEither(o) &&
      Either.isLeft(o) &&
      (o.left instanceof MalformedMessageError || o.left instanceof OversizedMessageError),
    check: (decoded, bytes) => {
      const batch = Either.getOrThrow(decoded)
      const values = batch.groups.flatMap((g) => (g.target.batched ? (g.value as Array<unknown>) : [g.value]))
      if (values.length !== batch.count) return `${values.length} values for a count of ${batch.count}`
      const expected = reference(bytes)
      if (expected === undefined) return "accepted bytes the generated codec refuses"
      return isDeepStrictEqual(values, expected) ? undefined : "values differ from the generated codec's"
    },
    seeds: batchSeeds,
    protobuf: true
  })
  expect(report.cases).toBe(fuzzRuns())
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)

const headerSeeds = [
  "NATS/1.0\r\nreef-type: reef.v1.CounterAdd\r\n\r\n",
  "NATS/1.0\r\nreef-type: reef.v1.CounterAdd\r\ntraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n\r\n",
  "NATS/1.0 503\r\n\r\n",
  "NATS/1.0\r\nreef-error: 1\r\nreef-type: reef.v1.ErrorDetail\r\n\r\n"
].map((s) => new TextEncoder().encode(s))

it("decodes a hostile header block into the kernel's headers (the same from its cache) or marks it malformed", () => {
  const received = new ReceivedHeaders(4)
  const message = (bytes: Uint8Array) =>
    new MsgImpl(
      { subject: new TextEncoder().encode("fuzz"), sid: 1, size: bytes.length, hdr: bytes.length } as MsgArg,
      bytes,
      {} as never
    )
  const report = fuzzDecoder({
    name: "NATS header block (ReceivedHeaders)",
    decode: (bytes) => [received.of(message(bytes)), received.of(message(bytes.slice()))] as const,
    refused: (o) => Array.isArray(o) && (o[0] as Map<string, string>).has(MALFORMED_HEADERS_HEADER),
    check: ([first, again]) => {
      for (const [k, v] of first) if (typeof k !== "string" || typeof v !== "string") return "a header is not text"
      return isDeepStrictEqual(new Map(first), new Map(again)) ? undefined : "a cached block differs from its decoding"
    },
    seeds: headerSeeds
  })
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)
