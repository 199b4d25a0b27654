/**
 * A Redis reply as plain data, and its RESP2 / RESP3 encoding. Pure: the RESP server (resp-server.ts) encodes
 * what the command table (redis-commands.ts) or a local redis-server (redis-app.ts) answered.
 *
 * RESP3 (a client that said `HELLO 3`) differs only where its types exist: null is `_`, a map is `%`, a double
 * `,`, a boolean `#`; under RESP2 a null bulk is `$-1`, a null array `*-1` and a map a flat array.
 */

export type RespValue =
  | { readonly t: "simple"; readonly s: string }
  | { readonly t: "error"; readonly s: string }
  | { readonly t: "int"; readonly n: number | bigint }
  | { readonly t: "bulk"; readonly b: Uint8Array }
  | { readonly t: "null" }
  | { readonly t: "nullArray" }
  | { readonly t: "array"; readonly items: ReadonlyArray<RespValue> }
  | { readonly t: "map"; readonly entries: ReadonlyArray<readonly [RespValue, RespValue]> }

export const OK: RespValue = { t: "simple", s: "OK" }
export const NULL: RespValue = { t: "null" }
export const simple = (s: string): RespValue => ({ t: "simple", s })
export const int = (n: number | bigint): RespValue => ({ t: "int", n })
export const bulk = (b: Uint8Array): RespValue => ({ t: "bulk", b })
export const text = (s: string): RespValue => ({ t: "bulk", b: Buffer.from(s, "utf8") })
export const array = (items: ReadonlyArray<RespValue>): RespValue => ({ t: "array", items })
export const map = (entries: ReadonlyArray<readonly [RespValue, RespValue]>): RespValue => ({ t: "map", entries })

/**
 * An error reply. `code` is its first word as Redis clients read it (ERR, WRONGTYPE, LOADING, ...); a message
 * never holds a line break (RESP forbids one in a simple string), so any is replaced by a space.
 */
export const error = (code: string, message: string): RespValue => ({
  t: "error",
  s: `${code} ${message}`.replace(/[\r\n]+/g, " ")
})
export const err = (message: string): RespValue => error("ERR", message)

const CRLF = Buffer.from("\r\n")

/** Appends the encoding of `value` to `out` (buffers written later as one). */
export const encodeResp = (value: RespValue, protocol: 2 | 3, out: Array<Uint8Array>): void => {
  switch (value.t) {
    case "simple":
      out.push(Buffer.from(`+${value.s}\r\n`, "utf8"))
      return
    case "error":
      out.push(Buffer.from(`-${value.s}\r\n`, "utf8"))
      return
    case "int":
      out.push(Buffer.from(`:${value.n}\r\n`))
      return
    case "bulk":
      out.push(Buffer.from(`$${value.b.byteLength}\r\n`), value.b, CRLF)
      return
    case "null":
      out.push(Buffer.from(protocol === 3 ? "_\r\n" : "$-1\r\n"))
      return
    case "nullArray":
      out.push(Buffer.from(protocol === 3 ? "_\r\n" : "*-1\r\n"))
      return
    case "array":
      out.push(Buffer.from(`*${value.items.length}\r\n`))
      for (const item of value.items) encodeResp(item, protocol, out)
      return
    case "map":
      out.push(Buffer.from(protocol === 3 ? `%${value.entries.length}\r\n` : `*${value.entries.length * 2}\r\n`))
      for (const [k, v] of value.entries) {
        encodeResp(k, protocol, out)
        encodeResp(v, protocol, out)
      }
      return
  }
}

/** The encoding of one value, as one buffer (tests, and replies that go out alone). */
export const respBytes = (value: RespValue, protocol: 2 | 3 = 2): Buffer => {
  const out: Array<Uint8Array> = []
  encodeResp(value, protocol, out)
  return Buffer.concat(out)
}
