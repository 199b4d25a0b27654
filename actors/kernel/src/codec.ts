/**
 * Protobuf codecs keyed by fully qualified type name. The name travels in the NATS header `reef-type`
 * (or in each BatchEntry), so a receiver decodes with the codec the sender meant, and an unknown name or
 * bad bytes become typed errors rather than garbage. Pure: no I/O.
 */
import { BinaryReader, type BinaryWriter } from "@bufbuild/protobuf/wire"
import * as Either from "effect/Either"
import { MalformedMessageError, OversizedMessageError, UnknownTypeError } from "./errors.js"

/** What ts-proto generates for each message with `outputTypeAnnotations=static-only`. */
export interface Codec<A> {
  readonly $type: string
  encode(message: A, writer?: BinaryWriter): BinaryWriter
  decode(input: BinaryReader | Uint8Array, length?: number): A
}

/** Default payload limit: NATS' default max_payload is 1 MiB; keep room for headers. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024 - 16 * 1024

export const encodeMessage = <A>(codec: Codec<A>, message: A): Uint8Array => codec.encode(message).finish()

/** Encodes and enforces the payload limit on the sending side, so an oversized message fails before the wire. */
export const encodeChecked = <A>(
  codec: Codec<A>,
  message: A,
  limitBytes: number
): Either.Either<Uint8Array, OversizedMessageError> => {
  const bytes = encodeMessage(codec, message)
  return bytes.length > limitBytes
    ? Either.left(new OversizedMessageError({ type: codec.$type, sizeBytes: bytes.length, limitBytes }))
    : Either.right(bytes)
}

/**
 * Decodes all of `bytes` as `codec`, or throws. A generated decoder stops at a zero tag or an end-group tag and
 * returns what it read so far: the rest of the payload would be dropped without a word (found by fuzzing).
 */
export const decodeWhole = <A>(codec: Pick<Codec<A>, "decode">, bytes: Uint8Array): A => {
  const reader = new BinaryReader(bytes)
  const value = codec.decode(reader, bytes.length)
  if (reader.pos !== bytes.length) {
    throw new Error(`invalid tag (field number 0 or an end-group) before byte ${reader.pos} of ${bytes.length}`)
  }
  return value
}

/** Decodes `bytes` as `codec`, turning a protobuf parse failure into MalformedMessageError. */
export const decodeAs = <A>(
  codec: Codec<A>,
  bytes: Uint8Array,
  subject: string
): Either.Either<A, MalformedMessageError> =>
  Either.try({
    try: () => decodeWhole(codec, bytes),
    catch: (cause) => new MalformedMessageError({ type: codec.$type, subject, cause })
  })

export type RegistryDecodeError = UnknownTypeError | MalformedMessageError | OversizedMessageError

/** A fixed set of codecs, looked up by the type name carried with each message. */
export class CodecRegistry {
  private readonly byType: ReadonlyMap<string, Codec<unknown>>

  constructor(
    codecs: ReadonlyArray<Codec<any>>,
    readonly maxPayloadBytes: number = DEFAULT_MAX_PAYLOAD_BYTES
  ) {
    this.byType = new Map(codecs.map((codec) => [codec.$type, codec]))
  }

  has(type: string): boolean {
    return this.byType.has(type)
  }

  get types(): ReadonlyArray<string> {
    return [...this.byType.keys()]
  }

  /** Size check first (cheapest), then type lookup, then parse. */
  decode(type: string, bytes: Uint8Array, subject: string): Either.Either<unknown, RegistryDecodeError> {
    if (bytes.length > this.maxPayloadBytes) {
      return Either.left(new OversizedMessageError({ type, sizeBytes: bytes.length, limitBytes: this.maxPayloadBytes }))
    }
    const codec = this.byType.get(type)
    if (codec === undefined) return Either.left(new UnknownTypeError({ type, subject }))
    return decodeAs(codec, bytes, subject)
  }
}
