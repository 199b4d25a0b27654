/**
 * A Remora object as its contract sees it, for `reef tx get`: a token account's balance as a number, a YCSB
 * record's update count and fields, a TPC-C row's named fields, rather than the bytes of little-endian float64s
 * (actors/remora/src/contracts: layout.ts, token.ts, ycsb.ts, tpcc.ts). Pure: a key and its bytes in, a view out.
 */
import { TOKEN_PREFIX, TPCC_PREFIX, YCSB_ACCOUNT_BYTES, YCSB_FIELD_BYTES, YCSB_FIELDS } from "@reef/remora"

export const YCSB_PREFIX = "ycsb/"

/** The contract namespaces whose objects `reef tx get` can name: every other key names no object. */
export const OBJECT_NAMESPACES: ReadonlyArray<string> = [TOKEN_PREFIX, YCSB_PREFIX, TPCC_PREFIX]

export type ObjectFields = Readonly<Record<string, number | string | ReadonlyArray<string>>>

export interface ObjectView {
  /** `token account`, `YCSB record`, `TPC-C stock row`, or `bytes` when no layout applies. */
  readonly kind: string
  readonly fields: ObjectFields
}

/** Field names of TPC-C rows by the key's kind letter (`tpcc/<kind>/...`), in record order (tpcc.ts). */
const TPCC_ROWS: Readonly<Record<string, { readonly name: string; readonly fields: ReadonlyArray<string> }>> = {
  w: { name: "TPC-C warehouse", fields: ["taxBasisPoints", "ytdCents"] },
  d: { name: "TPC-C district", fields: ["taxBasisPoints", "ytdCents", "nextOrderId"] },
  c: {
    name: "TPC-C customer",
    fields: ["discountBasisPoints", "balanceCents", "ytdPaymentCents", "payments", "orders", "lastOrderId"]
  },
  i: { name: "TPC-C item", fields: ["priceCents"] },
  s: { name: "TPC-C stock", fields: ["quantity", "ytd", "orders", "remoteOrders"] },
  o: { name: "TPC-C order log", fields: ["orders", "lastOrderId", "lastCustomer", "lastLines", "totalCents"] }
}

/** Field `i` of a record of little-endian float64s (layout.ts). */
const numberAt = (value: Uint8Array, i: number): number =>
  new DataView(value.buffer, value.byteOffset, value.byteLength).getFloat64(i * 8, true)

const numbers = (value: Uint8Array, names: ReadonlyArray<string>): ObjectFields | undefined =>
  value.length === names.length * 8 ? Object.fromEntries(names.map((n, i) => [n, numberAt(value, i)])) : undefined

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

/** Whether `key` lies in a contract's namespace (a key outside every one names no object). */
export const inNamespace = (key: string): boolean => OBJECT_NAMESPACES.some((prefix) => key.startsWith(prefix))

/** The object's value decoded by the layout its key's contract gives it; raw hex when it does not fit one. */
export const objectView = (key: string, value: Uint8Array): ObjectView => {
  if (key.startsWith(TOKEN_PREFIX)) {
    const fields = numbers(value, ["balance", "transfers"])
    if (fields !== undefined) return { kind: "token account", fields }
  } else if (key.startsWith(YCSB_PREFIX) && value.length === YCSB_ACCOUNT_BYTES) {
    const fieldHex = Array.from({ length: YCSB_FIELDS }, (_, i) =>
      hex(value.subarray(8 + i * YCSB_FIELD_BYTES, 8 + (i + 1) * YCSB_FIELD_BYTES))
    )
    return { kind: "YCSB record", fields: { updates: numberAt(value, 0), fields: fieldHex } }
  } else if (key.startsWith(TPCC_PREFIX)) {
    const row = TPCC_ROWS[key.charAt(TPCC_PREFIX.length)]
    const fields = row === undefined ? undefined : numbers(value, row.fields)
    if (row !== undefined && fields !== undefined) return { kind: row.name, fields }
  }
  return { kind: "bytes", fields: { hex: hex(value) } }
}
