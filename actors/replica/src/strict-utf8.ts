/**
 * Invalid UTF-8 in a request's strings is refused, never rewritten. Protobuf decoders replace each invalid
 * sequence with U+FFFD, so two distinct invalid keys would become one key and collide. The KV service decodes
 * its requests with `StrictReader` instead: a string that is not valid UTF-8 arrives marked ill-formed (a lone
 * surrogate up front, which no UTF-8 decoding can produce), and validation refuses it with INVALID_ARGUMENT.
 * A key with a real U+FFFD, validly encoded, stays a valid key.
 */
import { BinaryReader } from "@bufbuild/protobuf/wire"

/** Marks a string that was not valid UTF-8 on the wire (see above). */
const INVALID_UTF8_MARK = "\uD800"

export class StrictReader extends BinaryReader {
  override string(): string {
    const start = this.pos
    try {
      return super.string(true)
    } catch {
      this.pos = start
      return INVALID_UTF8_MARK + super.string(false)
    }
  }
}

/** A lone surrogate: what a JavaScript string has that UTF-8 cannot carry (and the mark above). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/** True when `text` is well-formed Unicode (so it round-trips through UTF-8 unchanged). */
export const isWellFormed = (text: string): boolean => !LONE_SURROGATE.test(text)

/** A gRPC service definition whose requests are decoded with `StrictReader`. */
export const withStrictRequests = <
  D extends Record<string, { readonly requestDeserialize: (bytes: Buffer) => unknown }>
>(
  definition: D,
  codecs: {
    readonly [K in keyof D]: { readonly decode: (input: BinaryReader) => ReturnType<D[K]["requestDeserialize"]> }
  }
): D => {
  const strict: Record<string, unknown> = {}
  for (const [method, call] of Object.entries(definition)) {
    const codec = codecs[method as keyof D]
    strict[method] = { ...call, requestDeserialize: (bytes: Buffer) => codec.decode(new StrictReader(bytes)) }
  }
  return strict as D
}
