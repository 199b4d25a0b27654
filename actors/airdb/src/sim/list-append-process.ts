/**
 * One list-append client process for the multi-process history test (list-append.test.ts): opens an AirDB
 * client on real storage and runs transactions, printing a JSON line when it invokes one and when one
 * completes (wall-clock times: every process runs on this machine). A process killed mid-transaction leaves
 * an invocation without a completion: an unknown outcome in the history.
 *
 *   node --conditions=@reef/source --import tsx list-append-process.ts <json options>
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Random from "effect/Random"
import { openClient } from "../client/client.js"
import { openSegmentStore, type StorageOptions } from "../service/storage.js"
import { completionOf, planTxn, runTxn } from "./list-append.js"

interface ProcessOptions {
  readonly storage: StorageOptions
  readonly store: string
  readonly process: string
  readonly incarnation: number
  /** Append values of this incarnation start here (unique across processes and incarnations). */
  readonly firstValue: number
  readonly txns: number
  readonly keys: number
  readonly seed: number
  readonly isolation: "serializable" | "snapshot"
}

const options = JSON.parse(process.argv[2] ?? "{}") as ProcessOptions
const out = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`)

const program = Effect.gen(function* () {
  const store = yield* openSegmentStore(options.storage)
  const client = yield* openClient(store, {
    store: options.store,
    clientId: `${options.process}i${options.incarnation}`,
    isolation: options.isolation,
    create: { timely: { snapshotEvery: 16, epsilon: 0.5 }, conflictWindow: 128, snapshotTtlMs: 1_000 },
    blockBytes: 4096
  })
  out({ ready: true })
  const random = Random.make(options.seed)
  let value = options.firstValue
  for (let i = 0; i < options.txns; i++) {
    const planned = yield* planTxn(random, options.keys, 0.4, () => value++)
    const id = options.firstValue + i
    out({ invoke: id, ops: planned, at: Date.now() })
    const r = yield* Effect.either(runTxn(client, planned))
    if (Either.isRight(r)) out({ complete: id, type: "ok", ops: r.right.ops, at: Date.now() })
    else out({ complete: id, type: completionOf(r.left), error: r.left.message, at: Date.now() })
  }
  out({ done: true, stats: client.stats() })
})

Effect.runPromise(Effect.scoped(program)).then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
