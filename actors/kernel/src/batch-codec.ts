/**
 * The wire form of `tellMany`: an `EnvelopeBatch` of one-way messages, each entry with its own type name and
 * payload. Both directions make one pass over one buffer: the encoder writes every payload in place, and the
 * decoder walks the batch with a single reader, decoding each payload where it lies and resolving an entry's
 * type only when it differs from the previous entry's. A batch then costs its messages' own protobuf work plus
 * a few varints each, instead of an object, a buffer copy and a reader per entry (`EnvelopeBatch.decode`).
 * Pure: no I/O.
 */
import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire"
import { EnvelopeBatch } from "@reef/proto"
import * as Either from "effect/Either"
import type { Codec } from "./codec.js"
import { type DecodeError, MalformedMessageError, OversizedMessageError, UnknownTypeError } from "./errors.js"

// Protobuf tags (field number << 3 | wire type) of EnvelopeBatch.entries, BatchEntry.type, BatchEntry.payload.
const BATCH_ENTRIES_TAG = (1 << 3) | 2
const ENTRY_TYPE_TAG = (1 << 3) | 2
const ENTRY_PAYLOAD_TAG = (2 << 3) | 2

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()

/** The bytes every entry of a batch of `type` starts with: the type field and the payload's tag (by type). */
const entryHeads = new Map<string, Uint8Array>()
const entryHead = (type: string): Uint8Array => {
  let head = entryHeads.get(type)
  if (head === undefined) {
    head = new BinaryWriter().uint32(ENTRY_TYPE_TAG).bytes(utf8.encode(type)).uint32(ENTRY_PAYLOAD_TAG).finish()
    entryHeads.set(type, head)
  }
  return head
}

/**
 * One writer for every batch: `finish()` hands out a copy and keeps the buffer, so a batch is written into room
 * grown once instead of a buffer doubled from 128 bytes (and copied each time) per batch. Encoding is
 * synchronous, so batches never interleave in it.
 */
const batchWriter = new BinaryWriter()

/**
 * Encodes an EnvelopeBatch of `messages` in one pass: each entry's payload is written in place as a
 * length-delimited field (fork/join), with no per-message buffer and no second copy.
 */
export const encodeBatch = <A>(codec: Codec<A>, messages: ReadonlyArray<A>): Uint8Array => {
  const head = entryHead(codec.$type)
  const writer = batchWriter
  try {
    for (const message of messages) {
      writer.uint32(BATCH_ENTRIES_TAG).fork().raw(head).fork()
      codec.encode(message, writer)
      writer.join().join()
    }
  } catch (e) {
    writer.finish() // drop what the failed batch wrote and its open forks
    throw e
  }
  return writer.finish()
}

/** What a receiver knows about one type it accepts. */
export interface BatchTarget {
  readonly request: Codec<any>
  /** Consecutive entries of this target are decoded into one array (one handler call). */
  readonly batched: boolean
}

/** One call a batch makes: one entry, or consecutive entries of a batched target as an array. */
export interface BatchGroup<T extends BatchTarget> {
  readonly target: T
  readonly value: unknown
  readonly count: number
}

export interface DecodedBatch<T extends BatchTarget> {
  readonly groups: ReadonlyArray<BatchGroup<T>>
  /** Entries decoded (the sum of the groups' counts). */
  readonly count: number
  /** Entries refused one by one (unknown type, malformed payload, a nested batch); the others are kept. */
  readonly rejected: ReadonlyArray<DecodeError>
}

const malformedBatch = (subject: string, cause: string) =>
  new MalformedMessageError({ type: EnvelopeBatch.$type, subject, cause })

const sameBytes = (buf: Uint8Array, a: number, b: number, length: number): boolean => {
  for (let i = 0; i < length; i++) if (buf[a + i] !== buf[b + i]) return false
  return true
}

/**
 * Decodes a batch for a receiver that accepts the types `resolve` knows. A batch whose framing is broken is
 * refused whole (nothing of it is delivered); an entry that is unknown, malformed or oversized is refused alone.
 */
export const decodeBatch = <T extends BatchTarget>(
  bytes: Uint8Array,
  subject: string,
  resolve: (type: string) => T | undefined,
  maxPayloadBytes: number
): Either.Either<DecodedBatch<T>, MalformedMessageError | OversizedMessageError> => {
  if (bytes.length > maxPayloadBytes) {
    return Either.left(
      new OversizedMessageError({ type: EnvelopeBatch.$type, sizeBytes: bytes.length, limitBytes: maxPayloadBytes })
    )
  }
  const reader = new BinaryReader(bytes)
  const groups: Array<BatchGroup<T>> = []
  const rejected: Array<DecodeError> = []
  let count = 0
  // The last group while it is a batched one: the next entry of its target joins it.
  let open: { readonly target: T; readonly values: Array<unknown>; readonly group: { count: number } } | undefined
  // The previous entry's type, as a span of `bytes`, and what it resolved to.
  let lastTypeStart = -1
  let lastTypeLength = -1
  let lastType = ""
  let lastTarget: T | undefined
  try {
    while (reader.pos < reader.len) {
      const tag = reader.uint32()
      if (tag >>> 3 === 0) return Either.left(malformedBatch(subject, "field number 0"))
      if (tag !== BATCH_ENTRIES_TAG) {
        reader.skip(tag & 7, tag >>> 3)
        continue
      }
      const entryLength = reader.uint32()
      const entryEnd = reader.pos + entryLength
      if (entryEnd > reader.len) return Either.left(malformedBatch(subject, "entry overruns the batch"))
      let typeStart = 0
      let typeLength = 0
      let payloadStart = entryEnd
      let payloadLength = 0
      while (reader.pos < entryEnd) {
        const field = reader.uint32()
        if (field >>> 3 === 0) return Either.left(malformedBatch(subject, "field number 0"))
        if (field === ENTRY_TYPE_TAG || field === ENTRY_PAYLOAD_TAG) {
          const length = reader.uint32()
          if (field === ENTRY_TYPE_TAG) {
            typeStart = reader.pos
            typeLength = length
          } else {
            payloadStart = reader.pos
            payloadLength = length
          }
          reader.pos += length
        } else {
          reader.skip(field & 7, field >>> 3)
        }
      }
      if (reader.pos !== entryEnd) return Either.left(malformedBatch(subject, "entry field overruns its entry"))

      let type: string
      let target: T | undefined
      if (typeLength === lastTypeLength && sameBytes(bytes, typeStart, lastTypeStart, typeLength)) {
        type = lastType
        target = lastTarget
      } else {
        type = utf8Decoder.decode(bytes.subarray(typeStart, typeStart + typeLength))
        target = type === EnvelopeBatch.$type ? undefined : resolve(type)
        lastTypeStart = typeStart
        lastTypeLength = typeLength
        lastType = type
        lastTarget = target
      }
      const value =
        target === undefined
          ? undefined
          : payloadLength > maxPayloadBytes
            ? new OversizedMessageError({ type, sizeBytes: payloadLength, limitBytes: maxPayloadBytes })
            : decodeEntry(reader, target.request, payloadStart, payloadLength, type, subject)
      reader.pos = entryEnd
      if (target === undefined || value instanceof OversizedMessageError || value instanceof MalformedMessageError) {
        rejected.push(
          target !== undefined
            ? (value as DecodeError)
            : type === EnvelopeBatch.$type
              ? new MalformedMessageError({ type, subject, cause: "a batch inside a batch" })
              : new UnknownTypeError({ type, subject })
        )
        open = undefined
        continue
      }
      count++
      if (!target.batched) {
        groups.push({ target, value, count: 1 })
        open = undefined
      } else if (open !== undefined && open.target === target) {
        open.values.push(value)
        open.group.count++
      } else {
        const group = { target, value: [value], count: 1 }
        open = { target, values: group.value, group }
        groups.push(group)
      }
    }
  } catch (cause) {
    return Either.left(malformedBatch(subject, String((cause as Error)?.message ?? cause)))
  }
  if (reader.pos !== reader.len) return Either.left(malformedBatch(subject, "field overruns the batch"))
  return Either.right({ groups, count, rejected })
}

/** Decodes one payload where it lies; reading past its end is malformed, as a payload of its own would be. */
const decodeEntry = (
  reader: BinaryReader,
  codec: Codec<unknown>,
  start: number,
  length: number,
  type: string,
  subject: string
): unknown => {
  reader.pos = start
  try {
    const value = codec.decode(reader, length)
    return reader.pos === start + length
      ? value
      : new MalformedMessageError({ type, subject, cause: "payload overruns its entry" })
  } catch (cause) {
    return new MalformedMessageError({ type, subject, cause })
  }
}
