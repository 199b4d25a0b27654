/**
 * Workloads as signed transactions: YCSB read-modify-write over a Zipfian keyspace, token transfers and TPC-C
 * NewOrder + Payment. Deterministic from a seed; a share of transactions can carry a bad signature (their
 * stateful part must then be a no-op). Signing is real Ed25519 unless `sign` is replaced (the simulator marks
 * validity in the signature's first byte instead, see `fakeSigner`).
 */
import {
  TokenTransfer as TokenTransferMessage,
  TpccNewOrder,
  TpccPayment,
  type Transaction,
  type TransactionBody,
  TransactionBody as TransactionBodyMessage,
  YcsbRmw
} from "@reef/proto"
import { TOKEN_CONTRACT, tokenKey } from "../contracts/token.js"
import {
  CUSTOMERS_PER_DISTRICT,
  customerKey,
  DISTRICTS_PER_WAREHOUSE,
  districtKey,
  ITEMS,
  itemKey,
  orderLogKey,
  stockKey,
  TPCC_NEW_ORDER_CONTRACT,
  TPCC_PAYMENT_CONTRACT,
  warehouseKey
} from "../contracts/tpcc.js"
import { YCSB_CONTRACT, YCSB_FIELD_BYTES, YCSB_FIELDS, ycsbKey } from "../contracts/ycsb.js"
import type { Prng } from "../core/prng.js"
import { ZipfGenerator } from "./zipf.js"

/** Turns an encoded body into a signed transaction; `valid: false` must produce a signature that fails. */
export type Signer = (body: Uint8Array, valid: boolean) => Transaction

export interface Costs {
  readonly statelessCostUs: number
  readonly statefulCostUs: number
}

export interface YcsbOptions extends Costs {
  readonly keys: number
  readonly objectsPerTx: number
  /** Zipf θ; 0 is uniform. */
  readonly zipf: number
}

export interface TokenOptions extends Costs {
  readonly accounts: number
  readonly zipf: number
  readonly maxAmount: number
}

export interface TpccOptions extends Costs {
  readonly warehouses: number
  /** Share of NewOrder among NewOrder + Payment (TPC-C's mix: 45:43). */
  readonly newOrderShare: number
}

export type WorkloadSpec =
  | ({ readonly kind: "ycsb" } & YcsbOptions)
  | ({ readonly kind: "token" } & TokenOptions)
  | ({ readonly kind: "tpcc" } & TpccOptions)

/** A stream of transaction bodies; `next(id)` draws one. */
export interface BodySource {
  readonly next: (id: string) => TransactionBody
}

/** A Buffer over the same bytes (ts-proto's `bytes` fields are Buffers). */
export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const body = (
  id: string,
  readSet: ReadonlyArray<string>,
  writeSet: ReadonlyArray<string>,
  contract: string,
  args: Uint8Array,
  costs: Costs
): TransactionBody => ({
  id,
  readSet: [...readSet],
  writeSet: [...writeSet],
  call: { contract, args: asBuffer(args) },
  statelessCostUs: costs.statelessCostUs,
  statefulCostUs: costs.statefulCostUs
})

export const ycsbSource = (options: YcsbOptions, prng: Prng): BodySource => {
  const zipf = new ZipfGenerator(options.keys, options.zipf, prng)
  return {
    next: (id) => {
      const keys = zipf.distinct(Math.min(options.objectsPerTx, options.keys)).map(ycsbKey)
      const data = new Uint8Array(1 + prng.below(YCSB_FIELD_BYTES))
      for (let i = 0; i < data.length; i++) data[i] = prng.below(256)
      const args = YcsbRmw.encode({ field: prng.below(YCSB_FIELDS), data: asBuffer(data) }).finish()
      return body(id, keys, keys, YCSB_CONTRACT, args, options)
    }
  }
}

/** Transfers between two distinct accounts drawn Zipf over `accounts`, unless `endpoints` draws them (hotspot.ts). */
export const tokenSource = (
  options: TokenOptions,
  prng: Prng,
  endpoints?: () => readonly [from: string, to: string]
): BodySource => {
  const zipf = new ZipfGenerator(options.accounts, options.zipf, prng)
  const draw =
    endpoints ??
    (() => {
      const [a, b] = zipf.distinct(2) as [number, number]
      return [tokenKey(a), tokenKey(b)] as const
    })
  return {
    next: (id) => {
      const [from, to] = draw()
      const args = TokenTransferMessage.encode({ from, to, amount: 1 + prng.below(options.maxAmount) }).finish()
      return body(id, [from, to], [from, to], TOKEN_CONTRACT, args, options)
    }
  }
}

/**
 * TPC-C with the spec's remote shares: 1% of order lines from a remote warehouse, 15% of payments remote. The
 * home warehouse of each transaction is uniform, unless `home` draws it (1-based; hotspot.ts moves a hotspot).
 */
export const tpccSource = (options: TpccOptions, prng: Prng, home?: () => number): BodySource => {
  const warehouse = home ?? (() => 1 + prng.below(options.warehouses))
  const other = (w: number) =>
    options.warehouses === 1 ? w : 1 + ((w + prng.below(options.warehouses - 1)) % options.warehouses)
  return {
    next: (id) => {
      const w = warehouse()
      const d = 1 + prng.below(DISTRICTS_PER_WAREHOUSE)
      if (prng.chance(options.newOrderShare)) {
        const c = 1 + prng.below(CUSTOMERS_PER_DISTRICT)
        const lines = Array.from({ length: 5 + prng.below(11) }, () => ({
          itemId: 1 + prng.below(ITEMS),
          supplyWarehouseId: prng.chance(0.01) ? other(w) : w,
          quantity: 1 + prng.below(10)
        }))
        const items = [...new Set(lines.map((l) => itemKey(l.itemId)))]
        const stocks = [...new Set(lines.map((l) => stockKey(l.supplyWarehouseId, l.itemId)))]
        const args = TpccNewOrder.encode({ warehouseId: w, districtId: d, customerId: c, lines }).finish()
        return body(
          id,
          [warehouseKey(w), districtKey(w, d), customerKey(w, d, c), ...items],
          [districtKey(w, d), orderLogKey(w, d), ...stocks],
          TPCC_NEW_ORDER_CONTRACT,
          args,
          options
        )
      }
      const remote = prng.chance(0.15)
      const cw = remote ? other(w) : w
      const cd = remote ? 1 + prng.below(DISTRICTS_PER_WAREHOUSE) : d
      const c = 1 + prng.below(CUSTOMERS_PER_DISTRICT)
      const keys = [warehouseKey(w), districtKey(w, d), customerKey(cw, cd, c)]
      const args = TpccPayment.encode({
        warehouseId: w,
        districtId: d,
        customerWarehouseId: cw,
        customerDistrictId: cd,
        customerId: c,
        amount: 100 + prng.below(500_000 - 100)
      }).finish()
      return body(id, keys, keys, TPCC_PAYMENT_CONTRACT, args, options)
    }
  }
}

export const bodySource = (spec: WorkloadSpec, prng: Prng): BodySource =>
  spec.kind === "ycsb"
    ? ycsbSource(spec, prng)
    : spec.kind === "token"
      ? tokenSource(spec, prng)
      : tpccSource(spec, prng)

/** Signed transactions: `invalidShare` of them get a corrupted signature. */
export const transactionStream = (
  source: BodySource,
  signer: Signer,
  prng: Prng,
  invalidShare: number,
  idPrefix: string
) => {
  let n = 0
  return (): { readonly tx: Transaction; readonly valid: boolean } => {
    const valid = !prng.chance(invalidShare)
    const encoded = TransactionBodyMessage.encode(source.next(`${idPrefix}${++n}`)).finish()
    return { tx: signer(encoded, valid), valid }
  }
}

/** The simulator's signer: no cryptography, validity in the signature's first byte (see `fakeVerify`). */
export const fakeSigner: Signer = (bodyBytes, valid) => {
  const signature = Buffer.alloc(64)
  signature[0] = valid ? 1 : 0
  return { body: asBuffer(bodyBytes), publicKey: Buffer.alloc(32), signature }
}

export const fakeVerify = (tx: Transaction): boolean => tx.signature[0] === 1
