/**
 * What a replica decodes from its peers and from consensus: catch-up answers, snapshot chunks, and decided
 * client values (a KvBatch the applier decodes and applies). Hostile bytes give a typed refusal or something
 * that can be acted on without a crash or an allocation out of proportion (a forged chunk count used to
 * allocate an array of 2^32 - 1 entries).
 */
import { decodeAs } from "@reef/kernel"
import { fuzzDecoder, fuzzRuns } from "@reef/kernel/fuzz"
import { valueToWire } from "@reef/nic"
import { CatchUpReply, KvBatch, SnapshotChunkReply } from "@reef/proto"
import * as Either from "effect/Either"
import { expect, it } from "vitest"
import { catchUpReplyProblem, MAX_SNAPSHOT_CHUNKS, snapshotChunkProblem } from "./catch-up-check.js"
import { applyCommand, emptyKvState } from "./kv-state.js"
import { deliveredFromWire, installSnapshot } from "./snapshot.js"

const value = (seq: number) =>
  valueToWire({
    proposer: "r1",
    incarnation: "0000000000000001",
    seq,
    kind: "client",
    payload: KvBatch.encode({
      commands: [{ request: seq, op: { $case: "set", value: { key: `k${seq}`, value: Buffer.from("v") } } }]
    }).finish(),
    members: []
  })

const replySeeds = [
  CatchUpReply.encode(
    CatchUpReply.fromPartial({
      decisions: [
        { instance: 4, values: [value(1), value(2)] },
        { instance: 5, values: [] }
      ],
      joinInstance: 6,
      schedule: [{ fromInstance: 1, members: ["r1", "r2", "r3"] }],
      more: true
    })
  ).finish(),
  CatchUpReply.encode(
    CatchUpReply.fromPartial({
      hasSnapshot: true,
      snapshotInstance: 900,
      snapshotHash: "ab12",
      snapshotCommands: 77,
      snapshotId: 3,
      snapshotChunks: 2,
      snapshotDelivered: [{ proposer: "r1", incarnation: "0000000000000001", floor: 10, above: [12, 15] }],
      joinInstance: 901
    })
  ).finish()
]

it("refuses a hostile catch-up answer or acts on it within bounds", () => {
  const report = fuzzDecoder({
    name: "catch-up answer (CatchUpReply + catchUpReplyProblem)",
    decode: (bytes): Either.Either<{ chunks: number; delivered: unknown }, unknown> => {
      const reply = decodeAs(CatchUpReply, bytes, "fuzz")
      if (Either.isLeft(reply)) return Either.left(reply.left)
      const problem = catchUpReplyProblem(reply.right)
      if (problem !== undefined) return Either.left(problem)
      // What the driver builds from an accepted answer: the delivered index; it fetches the chunks one by one.
      const r = reply.right
      return Either.right({
        chunks: r.hasSnapshot ? r.snapshotChunks : 0,
        delivered: deliveredFromWire(r.snapshotDelivered)
      })
    },
    refused: (o) => Either.isEither(o) && Either.isLeft(o),
    check: (decoded) =>
      Either.getOrThrow(decoded).chunks <= MAX_SNAPSHOT_CHUNKS ? undefined : "more chunks than a snapshot has",
    seeds: replySeeds,
    protobuf: true
  })
  expect(report.cases).toBe(fuzzRuns())
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)

it("refuses a hostile snapshot chunk or installs it", () => {
  const seeds = [
    SnapshotChunkReply.encode({
      entries: [
        { key: "a", value: Buffer.from("1"), version: 1 },
        { key: "b", value: Buffer.from("22"), version: 9 }
      ]
    }).finish()
  ]
  const report = fuzzDecoder({
    name: "snapshot chunk (SnapshotChunkReply + snapshotChunkProblem)",
    decode: (bytes): Either.Either<ReturnType<typeof emptyKvState>, unknown> => {
      const chunk = decodeAs(SnapshotChunkReply, bytes, "fuzz")
      if (Either.isLeft(chunk)) return Either.left(chunk.left)
      const problem = snapshotChunkProblem(chunk.right)
      if (problem !== undefined) return Either.left(problem)
      const kv = emptyKvState()
      installSnapshot(kv, { stateHash: "h", appliedCommands: 0, chunks: [chunk.right.entries] })
      return Either.right(kv)
    },
    refused: (o) => Either.isEither(o) && Either.isLeft(o),
    check: (decoded, bytes) => {
      const kv = Either.getOrThrow(decoded)
      const entries = Either.getOrThrow(decodeAs(SnapshotChunkReply, bytes, "fuzz")).entries
      return kv.records.size === entries.length ? undefined : "an entry was lost when installed"
    },
    seeds,
    protobuf: true
  })
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)

it("skips or applies a hostile decided value (the applier's KvBatch)", () => {
  const report = fuzzDecoder({
    name: "decided client value (KvBatch + applyCommand)",
    decode: (bytes) => {
      const batch = decodeAs(KvBatch, bytes, "fuzz")
      if (Either.isLeft(batch)) return batch
      const kv = emptyKvState()
      return Either.right(batch.right.commands.map((c) => applyCommand(kv, c)))
    },
    refused: (o) => Either.isEither(o) && Either.isLeft(o),
    seeds: [value(1).payload],
    protobuf: true
  })
  expect(report.accepted).toBeGreaterThan(0)
}, 300_000)
