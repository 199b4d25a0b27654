/**
 * AirDB's record codec and segment framing on hostile bytes, as read back from a segment store: a
 * CorruptRecord (or a Corrupt frame) naming where, or a value that encodes back to a record decoding the same.
 * Each record decoder is fuzzed twice: on raw bytes (the checksum catches most damage) and on payloads sealed
 * with a valid checksum (what a writer with access to the store could write), which reach the protobuf parse.
 */
import { isDeepStrictEqual } from "node:util"
import { crc32 } from "node:zlib"
import { type FuzzTarget, fuzzDecoders, fuzzRuns } from "@reef/kernel/fuzz"
import { expect, it } from "vitest"
import { DEFAULT_STORE_CONFIG } from "../client/options.js"
import type { BlockRef } from "../core/blocks.js"
import { frameRecord, unframeRecords } from "../segment/framing.js"
import {
  CorruptRecord,
  decodeBlock,
  decodeCommandEntry,
  decodeIndexPart,
  decodeSegmentAdded,
  decodeStateRecord,
  encodeBlock,
  encodeCommandEntry,
  encodeIndexPart,
  encodeSegmentAdded,
  encodeStateRecord
} from "./record-codec.js"

interface RecordCodec<T> {
  readonly name: string
  readonly decode: (bytes: Uint8Array, segment: string, position: number) => T | CorruptRecord
  readonly encode: (value: T) => Uint8Array
  readonly seeds: ReadonlyArray<Uint8Array>
}

const codec = <T>(c: RecordCodec<T>): RecordCodec<unknown> => c as RecordCodec<unknown>
const bytes = (s: string) => new TextEncoder().encode(s)

const codecs: ReadonlyArray<RecordCodec<unknown>> = [
  codec({
    name: "command entry",
    decode: decodeCommandEntry,
    encode: encodeCommandEntry,
    seeds: [
      encodeCommandEntry({
        index: 41,
        writer: "w1",
        batch: 3,
        intentions: [
          { snapshotEntries: 40, checked: ["a", "b"], tx: 7, writes: [{ key: "a", value: bytes("1") }] },
          { snapshotEntries: 12, checked: [], tx: 8, writes: [{ key: "z", value: undefined }] }
        ]
      })
    ]
  }),
  codec({
    name: "segment added",
    decode: decodeSegmentAdded,
    encode: encodeSegmentAdded,
    seeds: [encodeSegmentAdded({ ordinal: 4, segment: "s-cmd-4", firstIndex: 400_000 })]
  }),
  codec({
    name: "state record",
    decode: decodeStateRecord,
    encode: encodeStateRecord,
    seeds: [
      encodeStateRecord({ _tag: "Config", index: 1, config: DEFAULT_STORE_CONFIG }),
      encodeStateRecord({
        _tag: "Begin",
        index: 2,
        begin: { from: 1, to: 128, ttlMs: 2000, owner: "c1", merge: true }
      }),
      encodeStateRecord({
        _tag: "Chain",
        index: 3,
        owner: "c2",
        chain: {
          snapshots: [{ from: 1, to: 128, segment: "s-snap-1", indexPosition: 99, keys: 10, bytes: 4096, blocks: 2 }],
          replayFrom: { ordinal: 1, position: 77, index: 129 }
        }
      })
    ]
  }),
  codec({
    name: "snapshot block",
    decode: decodeBlock,
    encode: (entries: ReturnType<typeof decodeBlock>) => encodeBlock(entries as never),
    seeds: [
      encodeBlock([
        ["a", { value: bytes("x"), modified: 5 }],
        ["b", { value: undefined, modified: 9 }]
      ])
    ]
  }),
  codec({
    name: "snapshot index part",
    decode: decodeIndexPart,
    encode: (p: { readonly blocks: ReadonlyArray<BlockRef>; readonly last: boolean }) =>
      encodeIndexPart(p.blocks, p.last),
    seeds: [encodeIndexPart([{ firstKey: "a", position: 0, length: 120, keys: 2 }], true)]
  })
]

/** `payload` as a record with a valid checksum (what the codec's `seal` writes). */
const sealed = (payload: Uint8Array): Uint8Array => {
  const out = new Uint8Array(5 + payload.length)
  out[0] = 1
  new DataView(out.buffer).setUint32(1, crc32(payload))
  out.set(payload, 5)
  return out
}

const targets = (resealed: boolean): Array<FuzzTarget<unknown>> =>
  codecs.map((c) => ({
    name: `AirDB ${c.name} record (${resealed ? "valid checksum" : "raw"})`,
    decode: (input) => c.decode(resealed ? sealed(input) : input, "fuzz", 0),
    refused: (o) => o instanceof CorruptRecord,
    check: (value) => {
      const again = c.decode(c.encode(value), "fuzz", 0)
      return isDeepStrictEqual(again, value) ? undefined : "its encoding decodes to another value"
    },
    // Sealed inputs are payloads: the seeds without their 5-byte header.
    seeds: resealed ? c.seeds.map((s) => s.subarray(5)) : c.seeds,
    protobuf: resealed
  }))

it("refuses a hostile record as corrupt or decodes one that re-encodes to itself", () => {
  for (const resealed of [false, true]) {
    const reports = fuzzDecoders(targets(resealed), fuzzRuns())
    for (const r of reports) expect(r.accepted + r.refused).toBe(fuzzRuns())
    if (resealed) expect(reports.every((r) => r.accepted > 0)).toBe(true)
  }
}, 300_000)

it("unframes a hostile byte stream into whole, intact records or reports where it is corrupt", () => {
  const records = [bytes("first"), new Uint8Array(0), bytes("a longer third record")]
  const stream = Buffer.concat(records.map(frameRecord))
  const report = fuzzDecoders(
    [
      {
        name: "AirDB segment framing (unframeRecords)",
        decode: (chunk) => unframeRecords(chunk, 1000, 64, 4096),
        refused: (o) => (o as { _tag: string })._tag === "Corrupt",
        check: (u, chunk) => {
          if (u._tag !== "Records") return "neither Records nor Corrupt"
          let at = 1000
          for (const r of u.records) {
            if (r.position !== at || r.next !== r.position + 8 + r.bytes.length)
              return "records do not follow each other"
            const frame = chunk.subarray(r.position - 1000 + 8, r.next - 1000)
            if (
              Buffer.compare(frame, r.bytes) !== 0 ||
              crc32(r.bytes) !== Buffer.from(chunk).readUInt32BE(r.position - 1000 + 4)
            ) {
              return "a record is not the framed bytes or fails its checksum"
            }
            at = r.next
          }
          return undefined
        },
        seeds: [stream, frameRecord(bytes("x"))]
      }
    ],
    fuzzRuns()
  )
  expect(report[0]!.accepted).toBeGreaterThan(0)
}, 300_000)
