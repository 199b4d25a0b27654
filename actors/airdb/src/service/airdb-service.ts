/**
 * reef.v1.AirDB over gRPC: the edge between wire messages and an AirDB client (the `airdb` role, and the
 * SLSMR baseline's servers). Keys arrive as bytes and must be UTF-8 (refused, never rewritten); AirDB's
 * errors become Reef error codes here, and only here.
 */
import { grpcService, InvalidRequestError } from "@reef/grpc"
import { HandlerError } from "@reef/kernel"
import { AirDBService, type AirDbOp, type AirDbReadResult, type AirDbTransactResponse, ErrorCode } from "@reef/proto"
import * as Effect from "effect/Effect"
import type { AirDbClient, SnapshotMoved, Tx } from "../client/client.js"
import type { AirDbError } from "../client/errors.js"

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** A key sent as bytes: valid UTF-8, or the request is refused. */
export const keyOf = (field: string, bytes: Uint8Array): Effect.Effect<string, InvalidRequestError> => {
  try {
    return Effect.succeed(utf8.decode(bytes))
  } catch {
    return Effect.fail(new InvalidRequestError({ field, reason: "not valid UTF-8" }))
  }
}

const keyBytes = (key: string): Buffer => Buffer.from(key, "utf8")
/** Bytes as the generated messages want them (a Buffer view, no copy). */
const buf = (bytes: Uint8Array | undefined): Buffer =>
  bytes === undefined ? Buffer.alloc(0) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** The one mapping of AirDB's errors to Reef error codes (and so to gRPC statuses). */
export const toHandlerError = (e: AirDbError): HandlerError => {
  switch (e._tag) {
    case "AirDbInvalidArgument":
    case "TransactionTooLarge":
      return new HandlerError({ code: ErrorCode.ERROR_CODE_INVALID_ARGUMENT, message: e.message })
    case "TransactionAborted":
      return new HandlerError({ code: ErrorCode.ERROR_CODE_CONFLICT, message: e.message })
    case "StorageUnavailable":
      return new HandlerError({ code: ErrorCode.ERROR_CODE_UNAVAILABLE, message: e.message })
    case "ClientClosed":
      return new HandlerError({ code: ErrorCode.ERROR_CODE_STOPPED, message: e.message })
    case "StoreCorrupt":
    case "StoreIncompatible":
      return new HandlerError({ code: ErrorCode.ERROR_CODE_HANDLER_FAILED, message: e.message })
  }
}

export const AIRDB_DEFAULT_SCAN_LIMIT = 1000
export const AIRDB_MAX_SCAN_LIMIT = 100_000
/**
 * Most operations in one Transact request (etcd's --max-txn-ops is 128 by default): a transaction runs on the
 * client's event loop, and a request of 100,000 reads held up every other request of that client for seconds.
 */
export const AIRDB_MAX_TRANSACTION_OPS = 1024
/** Operations a transaction runs before it lets other requests of the same client have a turn. */
const OPS_PER_TURN = 64

/**
 * One rule for keys written twice in one request, as etcd's ("duplicate key given in txn request"): a key may
 * be put or deleted at most once per Transact. Reads and compares may name any key, any number of times, and
 * see the request's earlier writes (read-your-writes).
 */
const duplicateWrite = (ops: ReadonlyArray<AirDbOp>, keys: ReadonlyArray<string>): InvalidRequestError | undefined => {
  const written = new Map<string, number>()
  for (const [i, op] of ops.entries()) {
    if (op.op?.$case !== "put" && op.op?.$case !== "delete") continue
    const first = written.get(keys[i]!)
    if (first !== undefined) {
      return new InvalidRequestError({
        field: `ops[${i}]`,
        reason: `key ${JSON.stringify(keys[i])} is already written by ops[${first}]: a key may be put or deleted once per transaction`
      })
    }
    written.set(keys[i]!, i)
  }
  return undefined
}

/** A failed compare ends the transaction function: nothing is committed. */
class CompareFailed {
  readonly _tag = "CompareFailed"
  constructor(readonly index: number) {}
}

const sameBytes = (a: Uint8Array | undefined, b: Uint8Array) =>
  a !== undefined && a.byteLength === b.byteLength && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0

/** Runs the ops of a Transact request, in order, inside one transaction. */
const runOps = (ops: ReadonlyArray<AirDbOp>, keys: ReadonlyArray<string>) => (tx: Tx) =>
  Effect.gen(function* () {
    const reads: Array<AirDbReadResult> = []
    for (const [i, op] of ops.entries()) {
      if (i > 0 && i % OPS_PER_TURN === 0) yield* Effect.yieldNow()
      const key = keys[i]!
      switch (op.op?.$case) {
        case "read": {
          const value = yield* tx.get(key)
          reads.push({ key: keyBytes(key), found: value !== undefined, value: buf(value) })
          break
        }
        case "put":
          yield* tx.put(key, op.op.value.value)
          break
        case "delete":
          yield* tx.delete(key)
          break
        case "compare": {
          const value = yield* tx.get(key)
          const holds = op.op.value.exists ? sameBytes(value, op.op.value.value) : value === undefined
          if (!holds) return yield* Effect.fail(new CompareFailed(i))
          break
        }
      }
    }
    return reads
  }) as Effect.Effect<Array<AirDbReadResult>, AirDbError | SnapshotMoved | CompareFailed>

export const airDbGrpcService = (client: AirDbClient) =>
  grpcService(AirDBService, {
    transact: (request) =>
      Effect.gen(function* () {
        if (request.ops.length === 0) return yield* new InvalidRequestError({ field: "ops", reason: "no operations" })
        if (request.ops.length > AIRDB_MAX_TRANSACTION_OPS) {
          return yield* new InvalidRequestError({
            field: "ops",
            reason: `${request.ops.length} operations; a transaction has at most ${AIRDB_MAX_TRANSACTION_OPS} (split it)`
          })
        }
        const keys = yield* Effect.forEach(request.ops, (op, i) => {
          if (op.op === undefined)
            return Effect.fail(new InvalidRequestError({ field: `ops[${i}]`, reason: "empty op" }))
          return keyOf(`ops[${i}].key`, op.op.value.key)
        })
        const duplicate = duplicateWrite(request.ops, keys)
        if (duplicate !== undefined) return yield* duplicate
        const attempts = request.maxAttempts > 0 ? { maxAttempts: Math.min(request.maxAttempts, 100) } : {}
        const r = yield* Effect.either(client.transact(runOps(request.ops, keys), attempts))
        if (r._tag === "Left") {
          if (r.left instanceof CompareFailed) {
            const failed: AirDbTransactResponse = {
              committed: false,
              reads: [],
              commitTs: 0,
              snapshotEntries: 0,
              attempts: 1,
              failedCompare: r.left.index
            }
            return failed
          }
          return yield* Effect.fail(toHandlerError(r.left as AirDbError))
        }
        const response: AirDbTransactResponse = {
          committed: true,
          reads: r.right.value,
          commitTs: r.right.commitTs ?? 0,
          snapshotEntries: r.right.snapshot,
          attempts: r.right.attempts,
          failedCompare: -1
        }
        return response
      }),
    get: (request) =>
      Effect.gen(function* () {
        const key = yield* keyOf("key", request.key)
        const r = yield* Effect.mapError(client.get(key), toHandlerError)
        return { found: r.value !== undefined, value: buf(r.value), snapshotEntries: r.snapshot }
      }),
    put: (request) =>
      Effect.gen(function* () {
        const key = yield* keyOf("key", request.key)
        return { commitTs: yield* Effect.mapError(client.put(key, request.value), toHandlerError) }
      }),
    delete: (request) =>
      Effect.gen(function* () {
        const key = yield* keyOf("key", request.key)
        return { commitTs: yield* Effect.mapError(client.delete(key), toHandlerError) }
      }),
    scan: (request) =>
      Effect.gen(function* () {
        const start = yield* keyOf("start", request.start)
        const end = request.end.byteLength === 0 ? undefined : yield* keyOf("end", request.end)
        if (request.limit > AIRDB_MAX_SCAN_LIMIT) {
          return yield* new InvalidRequestError({ field: "limit", reason: `at most ${AIRDB_MAX_SCAN_LIMIT}` })
        }
        const r = yield* Effect.mapError(
          client.scan(start, end, request.limit === 0 ? AIRDB_DEFAULT_SCAN_LIMIT : request.limit),
          toHandlerError
        )
        return {
          items: r.items.map(([k, v]) => ({ key: keyBytes(k), value: buf(v) })),
          snapshotEntries: r.snapshot,
          more: r.more
        }
      })
  })
