/**
 * YCSB read-modify-write over 0.25 KB accounts (the paper's §6.1 workload): every key of the write set gets its
 * update counter incremented and one field mixed with the call's data and with the counters of every key read.
 * The mix is not commutative, so executing two transactions on a key in the wrong order, or reading a wrong
 * version of any key, changes the final state (the simulator's serializability check relies on it).
 */
import { YcsbRmw } from "@reef/proto"
import { type Contract, executed } from "./contract.js"
import { fillDeterministic, fnv1a } from "./layout.js"

export const YCSB_CONTRACT = "ycsb.rmw"
export const YCSB_ACCOUNT_BYTES = 256
export const YCSB_FIELDS = 8
export const YCSB_FIELD_BYTES = 31
/** Bytes 0..8 hold the update counter (little-endian float64). */
const FIELDS_OFFSET = 8

export const YCSB_PREFIX = "ycsb/"
export const ycsbKey = (n: number): string => `${YCSB_PREFIX}${n}`

export const ycsbGenesis = (key: string): Uint8Array => {
  const bytes = new Uint8Array(YCSB_ACCOUNT_BYTES)
  fillDeterministic(bytes, FIELDS_OFFSET, fnv1a(key))
  return bytes
}

const counterOf = (value: Uint8Array): number =>
  value.length >= 8 ? new DataView(value.buffer, value.byteOffset, 8).getFloat64(0, true) : 0

export const ycsbRmw: Contract<YcsbRmw> = {
  name: YCSB_CONTRACT,
  namespace: YCSB_PREFIX,
  decodeArgs: (bytes) => YcsbRmw.decode(bytes),
  checkArgs: (args) =>
    args.field >= YCSB_FIELDS
      ? `field must be below ${YCSB_FIELDS}, got ${args.field}`
      : args.data.length > YCSB_FIELD_BYTES
        ? `data must be at most ${YCSB_FIELD_BYTES} bytes, got ${args.data.length}`
        : undefined,
  // The keys are the declared sets themselves.
  accesses: (_args, declared) => ({ reads: declared.readSet, writes: declared.writeSet }),
  execute: (args, declared, read) => {
    let seen = 0
    for (const key of declared.readSet) seen = (seen * 31 + counterOf(read(key))) % 0x7fffffff
    const writes = new Map<string, Uint8Array>()
    const offset = FIELDS_OFFSET + args.field * YCSB_FIELD_BYTES
    for (const key of declared.writeSet) {
      const value = read(key) // the contract's own copy
      const counter = counterOf(value) + 1
      new DataView(value.buffer, value.byteOffset, 8).setFloat64(0, counter, true)
      for (let j = 0; j < YCSB_FIELD_BYTES; j++) {
        const d = args.data.length === 0 ? 0 : args.data[j % args.data.length]!
        value[offset + j] = (value[offset + j]! * 31 + d + counter + seen) & 0xff
      }
      writes.set(key, value)
    }
    return executed(writes)
  }
}
