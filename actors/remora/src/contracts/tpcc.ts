/**
 * TPC-C NewOrder and Payment (the two transactions the paper runs, 88% of the TPC-C mix) as contracts over
 * declared objects. Every row a transaction touches is an object named by its primary key, so the read and
 * write sets are known before execution; the rows a NewOrder inserts (ORDER, NEW-ORDER, ORDER-LINE) are kept
 * as a per-district order log object, whose key is known up front, instead of rows keyed by the new order id.
 *
 * Records are float64 fields (layout.ts); money is in cents.
 */
import { TpccNewOrder, TpccPayment } from "@reef/proto"
import { type Contract, type ContractOutcome, executed } from "./contract.js"
import { fnv1a, getNumber, record, setNumber } from "./layout.js"

export const TPCC_NEW_ORDER_CONTRACT = "tpcc.new_order"
export const TPCC_PAYMENT_CONTRACT = "tpcc.payment"
export const TPCC_PREFIX = "tpcc/"
export const DISTRICTS_PER_WAREHOUSE = 10
export const CUSTOMERS_PER_DISTRICT = 3000
export const ITEMS = 100_000
export const MAX_WAREHOUSES = 100_000
export const MAX_ORDER_LINES = 15
export const MAX_LINE_QUANTITY = 10
export const MAX_PAYMENT_CENTS = 500_000

export const warehouseKey = (w: number): string => `tpcc/w/${w}`
export const districtKey = (w: number, d: number): string => `tpcc/d/${w}/${d}`
export const customerKey = (w: number, d: number, c: number): string => `tpcc/c/${w}/${d}/${c}`
export const itemKey = (i: number): string => `tpcc/i/${i}`
export const stockKey = (w: number, i: number): string => `tpcc/s/${w}/${i}`
/** The district's order log: what its NewOrders inserted (count, last order, running total). */
export const orderLogKey = (w: number, d: number): string => `tpcc/o/${w}/${d}`

// Field indexes of each record.
const W = { tax: 0, ytd: 1 } as const
const D = { tax: 0, ytd: 1, nextOrderId: 2 } as const
const C = { discount: 0, balance: 1, ytdPayment: 2, payments: 3, orders: 4, lastOrderId: 5 } as const
const I = { price: 0 } as const
const S = { quantity: 0, ytd: 1, orders: 2, remoteOrders: 3 } as const
const O = { orders: 0, lastOrderId: 1, lastCustomer: 2, lastLines: 3, total: 4 } as const

const basisPoints = (key: string, max: number): number => fnv1a(key) % max

/** The initial value of a TPC-C row, derived from its key (the population of TPC-C §4.3, simplified). */
export const tpccGenesis = (key: string): Uint8Array => {
  const kind = key.charAt(TPCC_PREFIX.length)
  switch (kind) {
    case "w":
      return record([basisPoints(key, 2000), 30_000_000])
    case "d":
      return record([basisPoints(key, 2000), 3_000_000, 3001])
    case "c":
      return record([basisPoints(key, 5000), -1000, 1000, 1, 0, 0])
    case "i":
      return record([100 + (fnv1a(key) % 9901)])
    case "s":
      return record([10 + (fnv1a(key) % 91), 0, 0, 0])
    default:
      return record([0, 0, 0, 0, 0])
  }
}

const inRange = (value: number, lo: number, hi: number) => Number.isInteger(value) && value >= lo && value <= hi

const checkDistrict = (w: number, d: number): string | undefined =>
  !inRange(w, 1, MAX_WAREHOUSES)
    ? `warehouse must be in 1..${MAX_WAREHOUSES}`
    : !inRange(d, 1, DISTRICTS_PER_WAREHOUSE)
      ? `district must be in 1..${DISTRICTS_PER_WAREHOUSE}`
      : undefined

const newOrderAccess = (args: TpccNewOrder) => {
  const w = args.warehouseId
  const d = args.districtId
  const items = new Set<string>()
  const stocks = new Set<string>()
  for (const line of args.lines) {
    items.add(itemKey(line.itemId))
    stocks.add(stockKey(line.supplyWarehouseId, line.itemId))
  }
  return {
    reads: [warehouseKey(w), districtKey(w, d), customerKey(w, d, args.customerId), ...items],
    writes: [districtKey(w, d), orderLogKey(w, d), ...stocks]
  }
}

const set = setNumber

export const tpccNewOrder: Contract<TpccNewOrder> = {
  name: TPCC_NEW_ORDER_CONTRACT,
  namespace: TPCC_PREFIX,
  decodeArgs: (bytes) => TpccNewOrder.decode(bytes),
  checkArgs: (args) => {
    const district = checkDistrict(args.warehouseId, args.districtId)
    if (district !== undefined) return district
    if (!inRange(args.customerId, 1, CUSTOMERS_PER_DISTRICT)) return `customer must be in 1..${CUSTOMERS_PER_DISTRICT}`
    if (!inRange(args.lines.length, 1, MAX_ORDER_LINES)) return `an order has 1..${MAX_ORDER_LINES} lines`
    for (const line of args.lines) {
      if (!inRange(line.itemId, 1, ITEMS)) return `item must be in 1..${ITEMS}`
      if (!inRange(line.supplyWarehouseId, 1, MAX_WAREHOUSES)) return `supply warehouse must be in 1..${MAX_WAREHOUSES}`
      if (!inRange(line.quantity, 1, MAX_LINE_QUANTITY)) return `quantity must be in 1..${MAX_LINE_QUANTITY}`
    }
    return undefined
  },
  accesses: (args) => newOrderAccess(args),
  execute: (args, _declared, read): ContractOutcome => {
    const w = args.warehouseId
    const d = args.districtId
    const warehouse = read(warehouseKey(w))
    const district = read(districtKey(w, d))
    const customer = read(customerKey(w, d, args.customerId))
    const orderId = getNumber(district, D.nextOrderId)
    set(district, D.nextOrderId, orderId + 1)
    const writes = new Map<string, Uint8Array>([[districtKey(w, d), district]])
    let amount = 0
    for (const line of args.lines) {
      const price = getNumber(read(itemKey(line.itemId)), I.price)
      const key = stockKey(line.supplyWarehouseId, line.itemId)
      const stock = writes.get(key) ?? read(key)
      const quantity = getNumber(stock, S.quantity)
      set(stock, S.quantity, quantity >= line.quantity + 10 ? quantity - line.quantity : quantity - line.quantity + 91)
      set(stock, S.ytd, getNumber(stock, S.ytd) + line.quantity)
      set(stock, S.orders, getNumber(stock, S.orders) + 1)
      if (line.supplyWarehouseId !== w) set(stock, S.remoteOrders, getNumber(stock, S.remoteOrders) + 1)
      writes.set(key, stock)
      amount += line.quantity * price
    }
    const discount = getNumber(customer, C.discount)
    const tax = getNumber(warehouse, W.tax) + getNumber(district, D.tax)
    const total = Math.round((((amount * (10_000 - discount)) / 10_000) * (10_000 + tax)) / 10_000)
    const log = read(orderLogKey(w, d))
    set(log, O.orders, getNumber(log, O.orders) + 1)
    set(log, O.lastOrderId, orderId)
    set(log, O.lastCustomer, args.customerId)
    set(log, O.lastLines, args.lines.length)
    set(log, O.total, getNumber(log, O.total) + total)
    writes.set(orderLogKey(w, d), log)
    return executed(writes)
  }
}

const paymentKeys = (args: TpccPayment) => [
  warehouseKey(args.warehouseId),
  districtKey(args.warehouseId, args.districtId),
  customerKey(args.customerWarehouseId, args.customerDistrictId, args.customerId)
]

export const tpccPayment: Contract<TpccPayment> = {
  name: TPCC_PAYMENT_CONTRACT,
  namespace: TPCC_PREFIX,
  decodeArgs: (bytes) => TpccPayment.decode(bytes),
  checkArgs: (args) =>
    checkDistrict(args.warehouseId, args.districtId) ??
    checkDistrict(args.customerWarehouseId, args.customerDistrictId) ??
    (!inRange(args.customerId, 1, CUSTOMERS_PER_DISTRICT)
      ? `customer must be in 1..${CUSTOMERS_PER_DISTRICT}`
      : !inRange(args.amount, 1, MAX_PAYMENT_CENTS)
        ? `amount must be in 1..${MAX_PAYMENT_CENTS} cents`
        : undefined),
  accesses: (args) => ({ reads: paymentKeys(args), writes: paymentKeys(args) }),
  execute: (args, _declared, read) => {
    const [wKey, dKey, cKey] = paymentKeys(args) as [string, string, string]
    const warehouse = read(wKey)
    const district = read(dKey)
    const customer = read(cKey)
    set(warehouse, W.ytd, getNumber(warehouse, W.ytd) + args.amount)
    set(district, D.ytd, getNumber(district, D.ytd) + args.amount)
    set(customer, C.balance, getNumber(customer, C.balance) - args.amount)
    set(customer, C.ytdPayment, getNumber(customer, C.ytdPayment) + args.amount)
    set(customer, C.payments, getNumber(customer, C.payments) + 1)
    return executed(
      new Map([
        [wKey, warehouse],
        [dKey, district],
        [cKey, customer]
      ])
    )
  }
}

/** The NewOrder-side counters a test can check: orders placed in a district. */
export const districtOrders = (orderLog: Uint8Array): number => getNumber(orderLog, O.orders)
export const customerBalance = (customer: Uint8Array): number => getNumber(customer, C.balance)
