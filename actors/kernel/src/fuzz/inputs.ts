/**
 * Hostile inputs for decoders, as fast-check arbitraries: plain random bytes, valid encodings mutated the way
 * corruption and attackers mutate them (bit flips, boundary bytes, lengths overwritten with extreme values,
 * truncation, insertion, deletion, duplicated slices, two seeds spliced), and protobuf-shaped bytes (well-framed
 * fields with arbitrary numbers, wire types and values), which get past a protobuf decoder's framing and into
 * each message's field handling where plain random bytes rarely do.
 */
import fc from "fast-check"

/** Bytes that sit on boundaries: sign bits, varint continuation, all ones. */
const BOUNDARY_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff] as const

/** 32- and 64-bit values written over a length or count: zero, max, sign bit, just past a small buffer. */
const BOUNDARY_WORDS: ReadonlyArray<bigint> = [
  0n,
  1n,
  0x7fn,
  0x80n,
  0xffffn,
  0x7fffffffn,
  0x80000000n,
  0xffffffffn,
  0x1fffffffffffffn,
  0x7fffffffffffffffn,
  0xffffffffffffffffn
]

type Mutation =
  | { readonly kind: "flip"; readonly at: number; readonly bit: number }
  | { readonly kind: "set"; readonly at: number; readonly byte: number }
  | {
      readonly kind: "word"
      readonly at: number
      readonly word: bigint
      readonly width: 2 | 4 | 8
      readonly le: boolean
    }
  | { readonly kind: "varint"; readonly at: number; readonly word: bigint }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "insert"; readonly at: number; readonly bytes: Uint8Array }
  | { readonly kind: "delete"; readonly at: number; readonly length: number }
  | { readonly kind: "duplicate"; readonly at: number; readonly length: number; readonly times: number }
  | { readonly kind: "splice"; readonly at: number; readonly other: number; readonly from: number }

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    kind: fc.constant("set" as const),
    at: fc.nat(),
    byte: fc.oneof(fc.constantFrom(...BOUNDARY_BYTES), fc.integer({ min: 0, max: 255 }))
  }),
  fc.record({
    kind: fc.constant("word" as const),
    at: fc.nat(),
    word: fc.oneof(fc.constantFrom(...BOUNDARY_WORDS), fc.bigUintN(64)),
    width: fc.constantFrom(2 as const, 4 as const, 8 as const),
    le: fc.boolean()
  }),
  fc.record({
    kind: fc.constant("varint" as const),
    at: fc.nat(),
    word: fc.oneof(fc.constantFrom(...BOUNDARY_WORDS), fc.bigUintN(64))
  }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 16 })
  }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 16 }) }),
  fc.record({
    kind: fc.constant("duplicate" as const),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 64 }),
    times: fc.integer({ min: 1, max: 8 })
  }),
  fc.record({ kind: fc.constant("splice" as const), at: fc.nat(), other: fc.nat(), from: fc.nat() })
)

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let offset = 0
  for (const p of parts) {
    out.set(p, offset)
    offset += p.length
  }
  return out
}

/** Protobuf's base-128 varint of `value` (64 bits at most). */
export const varint = (value: bigint): Uint8Array => {
  const out: Array<number> = []
  let v = BigInt.asUintN(64, value)
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
  out.push(Number(v))
  return Uint8Array.from(out)
}

const wordBytes = (word: bigint, width: 2 | 4 | 8, le: boolean): Uint8Array => {
  const out = new Uint8Array(width)
  let v = BigInt.asUintN(width * 8, word)
  for (let i = 0; i < width; i++) {
    out[le ? i : width - 1 - i] = Number(v & 0xffn)
    v >>= 8n
  }
  return out
}

const applyMutation = (bytes: Uint8Array, m: Mutation, seeds: ReadonlyArray<Uint8Array>): Uint8Array => {
  const n = bytes.length
  const at = n === 0 ? 0 : m.at % (n + 1)
  switch (m.kind) {
    case "flip": {
      if (n === 0) return bytes
      const out = bytes.slice()
      out[m.at % n]! ^= 1 << m.bit
      return out
    }
    case "set": {
      if (n === 0) return bytes
      const out = bytes.slice()
      out[m.at % n] = m.byte
      return out
    }
    case "word":
      return concat(bytes.subarray(0, at), wordBytes(m.word, m.width, m.le), bytes.subarray(Math.min(n, at + m.width)))
    case "varint": {
      const v = varint(m.word)
      return concat(bytes.subarray(0, at), v, bytes.subarray(Math.min(n, at + v.length)))
    }
    case "truncate":
      return bytes.subarray(0, at)
    case "insert":
      return concat(bytes.subarray(0, at), m.bytes, bytes.subarray(at))
    case "delete":
      return concat(bytes.subarray(0, at), bytes.subarray(Math.min(n, at + m.length)))
    case "duplicate": {
      const slice = bytes.subarray(at, Math.min(n, at + m.length))
      return concat(
        bytes.subarray(0, at),
        ...Array.from({ length: m.times + 1 }, () => slice),
        bytes.subarray(at + slice.length)
      )
    }
    case "splice": {
      const other = seeds[m.other % seeds.length]!
      const from = other.length === 0 ? 0 : m.from % (other.length + 1)
      return concat(bytes.subarray(0, at), other.subarray(from))
    }
  }
}

/** Valid encodings with one to four mutations each (seeds must not be empty). */
export const mutatedBytes = (seeds: ReadonlyArray<Uint8Array>): fc.Arbitrary<Uint8Array> => {
  // Plain copies: a Buffer's slice() is a view, so mutating "a copy" of a Buffer seed changed the seed itself
  // and every later case started from a broken one.
  const own: ReadonlyArray<Uint8Array> = seeds.map((s) => Uint8Array.from(s))
  return fc
    .tuple(fc.nat({ max: own.length - 1 }), fc.array(mutationArb, { minLength: 1, maxLength: 4 }))
    .map(([i, mutations]) => mutations.reduce<Uint8Array>((b, m) => applyMutation(b, m, own), own[i]!))
}

/** Random bytes, short most of the time. */
export const randomBytes = (maxLength = 512): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.uint8Array({ maxLength: 32 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength }) }
  )

/** Field values protobuf decoders treat specially: 64-bit extremes, zigzag signs, lengths past the end. */
const varintValue = fc.oneof(
  fc.constantFrom(...BOUNDARY_WORDS),
  fc.bigUintN(64),
  fc.integer({ min: 0, max: 300 }).map(BigInt)
)

/** A field number: the low ones a message uses most of the time, else anything up to the maximum (2^29 - 1). */
const fieldNumber = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, 15, 16, 2047, 2048, 536870911) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 536870911 }) }
)

/**
 * Well-framed protobuf: a sequence of fields with arbitrary numbers and wire types (groups and the invalid wire
 * types 6 and 7 included), nested messages `depth` levels deep, strings that are not always UTF-8.
 */
export const protobufShaped = (depth = 3): fc.Arbitrary<Uint8Array> => {
  const { message } = fc.letrec<{ message: Uint8Array; field: Uint8Array }>((tie) => ({
    message: fc.array(tie("field"), { maxLength: 8, depthIdentifier: "protobuf" }).map((fields) => concat(...fields)),
    field: fc.oneof(
      { depthSize: "small", maxDepth: depth, depthIdentifier: "protobuf", withCrossShrink: true },
      fc.tuple(fieldNumber, varintValue).map(([f, v]) => concat(varint(BigInt(f) << 3n), varint(v))),
      fc
        .tuple(fieldNumber, fc.uint8Array({ minLength: 8, maxLength: 8 }))
        .map(([f, b]) => concat(varint((BigInt(f) << 3n) | 1n), b)),
      fc
        .tuple(fieldNumber, fc.uint8Array({ minLength: 4, maxLength: 4 }))
        .map(([f, b]) => concat(varint((BigInt(f) << 3n) | 5n), b)),
      fc
        .tuple(
          fieldNumber,
          fc.oneof(
            fc.uint8Array({ maxLength: 24 }),
            fc.string({ maxLength: 12 }).map((s) => new TextEncoder().encode(s))
          )
        )
        .map(([f, b]) => concat(varint((BigInt(f) << 3n) | 2n), varint(BigInt(b.length)), b)),
      fc.tuple(fieldNumber, fc.array(varintValue, { maxLength: 6 })).map(([f, vs]) => {
        const packed = concat(...vs.map(varint))
        return concat(varint((BigInt(f) << 3n) | 2n), varint(BigInt(packed.length)), packed)
      }),
      fc
        .tuple(fieldNumber, tie("message"))
        .map(([f, inner]) => concat(varint((BigInt(f) << 3n) | 2n), varint(BigInt(inner.length)), inner)),
      fc
        .tuple(fieldNumber, tie("message"))
        .map(([f, inner]) => concat(varint((BigInt(f) << 3n) | 3n), inner, varint((BigInt(f) << 3n) | 4n))),
      fc.tuple(fieldNumber, fc.constantFrom(4n, 6n, 7n)).map(([f, w]) => varint((BigInt(f) << 3n) | w))
    )
  }))
  return message
}

/**
 * Every kind of hostile input for a decoder: random bytes, mutated seeds (the most, when there are seeds)
 * and, for protobuf decoders, protobuf-shaped bytes and mutations of them.
 */
export const hostileBytes = (
  seeds: ReadonlyArray<Uint8Array>,
  options: { readonly protobuf?: boolean; readonly maxRandomLength?: number } = {}
): fc.Arbitrary<Uint8Array> => {
  const kinds: Array<fc.WeightedArbitrary<Uint8Array>> = [
    { weight: 2, arbitrary: randomBytes(options.maxRandomLength) }
  ]
  if (seeds.length > 0) kinds.push({ weight: 5, arbitrary: mutatedBytes(seeds) })
  if (options.protobuf === true) {
    kinds.push({ weight: 3, arbitrary: protobufShaped() })
    kinds.push({
      weight: 1,
      arbitrary: protobufShaped().chain((b) => (b.length === 0 ? fc.constant(b) : mutatedBytes([b])))
    })
  }
  return fc.oneof(...kinds)
}
