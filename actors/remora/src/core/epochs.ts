/**
 * Epochs and incremental snapshots (§4.6, App. A, Alg. 4) as plain data for the coordinator core.
 *
 * An epoch is a run of dispatched blocks. When it ends, the coordinator knows from its own metadata exactly
 * which object versions the epoch's end needs: for every key its blocks touched, the version the router will
 * hand to the key's next access ("With its global view of the system, the Coordinator knows exactly which
 * object versions it needs at the end of each epoch"). Once every transaction of the epoch completed, workers
 * report the latest version of each object they modified; the coordinator keeps exactly the expected ones,
 * persists them atomically and advances persist_index.
 */
import { type KeyIndex, type MetadataReader, versionOf } from "./object-table.js"
import type { Key, TxMeta } from "./types.js"

/** One object version of a snapshot. */
export interface PersistedObject {
  readonly key: Key
  readonly version: number
  readonly value: Uint8Array
}

/** Where the durable snapshot stands: its epoch, and the last seq and height whose effects it holds. */
export interface Persistence {
  readonly epoch: number
  /** persist_index: every transaction with seq <= it has its effects in the snapshot. */
  readonly seq: number
  readonly height: number
}

/** A dispatched block, kept until a persisted epoch covers it (the replay set of a recovery). */
export interface LoggedBlock<P> {
  readonly height: number
  readonly firstSeq: number
  readonly txs: ReadonlyArray<TxMeta<P>>
}

export interface ClosedEpoch {
  readonly epoch: number
  readonly lastSeq: number
  readonly lastHeight: number
  /** Key -> the version the epoch's end holds (the next access's input version). */
  readonly expected: Map<Key, number>
  readonly collected: Map<Key, PersistedObject>
  /** When its reports were asked for (undefined: not yet, some of its transactions are still running). */
  requestedAtMs: number | undefined
  persisting: boolean
}

/**
 * Ends epoch `epoch` at `lastSeq`: its blocks are those of `log` after `previous.height`; every key they touch
 * is expected at the version `router` assigns next (everything up to `lastSeq` is dispatched, nothing after).
 */
export const closeEpoch = <P>(
  epoch: number,
  previous: { readonly height: number },
  lastSeq: number,
  log: ReadonlyArray<LoggedBlock<P>>,
  keys: KeyIndex,
  router: MetadataReader
): ClosedEpoch => {
  const expected = new Map<Key, number>()
  let lastHeight = previous.height
  for (let i = log.length - 1; i >= 0 && log[i]!.height > previous.height; i--) {
    const block = log[i]!
    lastHeight = Math.max(lastHeight, block.height)
    for (const tx of block.txs) {
      for (const key of tx.keys) {
        if (!expected.has(key)) expected.set(key, versionOf(router.get(keys.find(key))))
      }
    }
  }
  return { epoch, lastSeq, lastHeight, expected, collected: new Map(), requestedAtMs: undefined, persisting: false }
}
