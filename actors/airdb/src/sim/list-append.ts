/**
 * The list-append workload on AirDB (Elle's): each key holds a list of integers; a transaction reads whole
 * lists and appends unique values (a read of the list, then a write of the longer list, in one transaction).
 * Used by the simulator and by the multi-process test over real storage; both record an Elle history.
 */
import * as Effect from "effect/Effect"
import type * as Random from "effect/Random"
import type { AirDbClient, SnapshotMoved } from "../client/client.js"
import type { AirDbError } from "../client/errors.js"
import type { MicroOp, Txn } from "./elle.js"

export const encodeList = (list: ReadonlyArray<number>): Uint8Array => {
  const out = new Uint8Array(list.length * 4)
  const view = new DataView(out.buffer)
  list.forEach((v, i) => {
    view.setUint32(i * 4, v)
  })
  return out
}

export const decodeList = (bytes: Uint8Array | undefined): Array<number> => {
  if (bytes === undefined) return []
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return Array.from({ length: bytes.byteLength / 4 }, (_, i) => view.getUint32(i * 4))
}

export interface PlannedOp {
  readonly f: "append" | "read"
  readonly key: string
  /** For an append: the unique value. */
  readonly value: number
  /** A read done as a single `Get` (the linearizable point read) rather than inside `Transact`. */
  readonly get?: boolean
}

/**
 * Draws a transaction: 1-4 operations over `keys` keys, reads with probability `readShare`; with probability
 * `getShare`, instead, one `Get` of one key.
 */
export const planTxn = (
  random: Random.Random,
  keys: number,
  readShare: number,
  nextValue: () => number,
  getShare = 0
): Effect.Effect<ReadonlyArray<PlannedOp>> =>
  Effect.gen(function* () {
    if (getShare > 0 && (yield* random.next) < getShare) {
      return [{ f: "read", key: `k${yield* random.nextIntBetween(0, keys)}`, value: 0, get: true }]
    }
    const n = yield* random.nextIntBetween(1, 5)
    const ops: Array<PlannedOp> = []
    for (let i = 0; i < n; i++) {
      const key = `k${yield* random.nextIntBetween(0, keys)}`
      const read = (yield* random.next) < readShare
      ops.push(read ? { f: "read", key, value: 0 } : { f: "append", key, value: nextValue() })
    }
    return ops
  })

/** Runs a planned transaction; returns the micro-ops with what the reads saw (of the attempt that committed). */
export const runTxn = (
  client: AirDbClient,
  ops: ReadonlyArray<PlannedOp>
): Effect.Effect<{ readonly ops: ReadonlyArray<MicroOp>; readonly commitTs: number | undefined }, AirDbError> =>
  ops.length === 1 && ops[0]!.get === true
    ? Effect.map(client.get(ops[0]!.key), (r) => ({
        ops: [{ f: "read", key: ops[0]!.key, value: decodeList(r.value) }],
        commitTs: undefined
      }))
    : Effect.map(
        client.transact(
          (tx) =>
            Effect.gen(function* () {
              const done: Array<MicroOp> = []
              for (const op of ops) {
                const list = decodeList(yield* tx.get(op.key))
                if (op.f === "read") {
                  done.push({ f: "read", key: op.key, value: list })
                } else {
                  yield* tx.put(op.key, encodeList([...list, op.value]))
                  done.push({ f: "append", key: op.key, value: op.value })
                }
              }
              return done
            }) as Effect.Effect<Array<MicroOp>, AirDbError | SnapshotMoved>
        ),
        (r) => ({ ops: r.value, commitTs: r.commitTs })
      )

/** How an AirDB failure enters the history: certainly not committed (fail) or unknown (info). */
export const completionOf = (error: AirDbError): Txn["type"] =>
  error._tag === "TransactionAborted" ||
  error._tag === "AirDbInvalidArgument" ||
  error._tag === "TransactionTooLarge" ||
  (error._tag === "StorageUnavailable" && !error.outcomeUnknown)
    ? "fail"
    : "info"

/** The micro-ops a transaction that did not complete meant to run (reads unknown). */
export const plannedOps = (ops: ReadonlyArray<PlannedOp>): ReadonlyArray<MicroOp> =>
  ops.map((op) =>
    op.f === "read" ? { f: "read", key: op.key, value: undefined } : { f: "append", key: op.key, value: op.value }
  )
