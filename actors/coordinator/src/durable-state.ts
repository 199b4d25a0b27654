/**
 * What the coordinator keeps on disk so that a restarted process resumes instead of starting over (issue 21):
 *
 * - `blocks`: every committed block after the persisted snapshot, written before any of it is dispatched (the
 *   replay set of a recovery, and the chain a restarted coordinator continues);
 * - `receipts`: every receipt ever given, written before it is answered (GetReceipt, idempotent submit);
 * - `objects` + `meta.persisted`: the epoch snapshot (§4.6), one atomic transaction per epoch, which also drops
 *   the blocks it covers;
 * - `meta.generation`: the fence generation, written before any worker hears of it.
 *
 * Two implementations with one interface: LMDB under `--data-dir` (durable), and memory (no data directory:
 * worker recovery still works, a coordinator restart starts a new chain).
 */
import { mkdirSync } from "node:fs"
import { Receipt, Transaction } from "@reef/proto"
import { admit, type LoggedBlock, type PersistedObject, type Persistence, type TxMeta } from "@reef/remora"
import { encodedTransaction, type RemoraTx } from "@reef/remora/shell"
import type { Database, RootDatabase } from "lmdb"

export interface BlockRecord extends LoggedBlock<Transaction> {
  readonly digest: string
  readonly committedAtMs: number
}

export interface Restored {
  /** The generation this incarnation fences with (already on disk). */
  readonly generation: number
  readonly persisted: Persistence
  readonly snapshot: ReadonlyArray<PersistedObject>
  readonly log: ReadonlyArray<BlockRecord>
  readonly receipts: number
}

export interface DurableState {
  readonly description: string
  /** Durable state of an earlier incarnation, with a fence generation above its; undefined on a fresh start. */
  readonly restore: () => Restored | undefined
  readonly appendBlock: (block: BlockRecord) => void
  readonly putReceipts: (receipts: ReadonlyArray<Receipt>) => void
  readonly receipt: (txId: string) => Receipt | undefined
  readonly persistEpoch: (persisted: Persistence, objects: ReadonlyArray<PersistedObject>) => void
  readonly setGeneration: (generation: number) => void
  readonly close: () => Promise<void>
}

const ZERO: Persistence = { epoch: 0, seq: 0, height: 0 }

interface StoredBlock {
  readonly height: number
  readonly firstSeq: number
  readonly digest: string
  readonly committedAtMs: number
  readonly txs: ReadonlyArray<Uint8Array>
}

const toStored = (b: BlockRecord): StoredBlock => ({
  height: b.height,
  firstSeq: b.firstSeq,
  digest: b.digest,
  committedAtMs: b.committedAtMs,
  txs: b.txs.map((tx) => encodedTransaction(tx.payload))
})

const fromStored = (b: StoredBlock): BlockRecord => ({
  height: b.height,
  firstSeq: b.firstSeq,
  digest: b.digest,
  committedAtMs: b.committedAtMs,
  txs: b.txs.map((bytes) => {
    const a = admit(Transaction.decode(bytes))
    if (!a.ok) throw new Error(`stored block ${b.height}: a transaction no longer admits: ${a.rejection.message}`)
    const meta = a.meta as RemoraTx
    encodedTransaction(meta.payload)
    return meta as TxMeta<Transaction>
  })
})

/** In memory: survives a worker's crash (the snapshot and log live here), not the coordinator's. */
export const memoryDurableState = (): DurableState => {
  const receipts = new Map<string, Receipt>()
  return {
    description: "in memory (no --data-dir: a restart starts a new chain)",
    restore: () => undefined,
    appendBlock: () => {},
    putReceipts: (rs) => {
      for (const r of rs) receipts.set(r.txId, r)
    },
    receipt: (txId) => receipts.get(txId),
    persistEpoch: () => {},
    setGeneration: () => {},
    close: async () => {}
  }
}

/** A write the coordinator could not make durable, even on a reopened environment: it must stop, not answer. */
export class DurableWriteError extends Error {
  readonly _tag = "DurableWriteError"
}

export interface LmdbDurableOptions {
  /** Told when a write failed and is tried again on a reopened environment. */
  readonly warn?: (message: string) => void
  /** Fault injection for tests: runs at the start of every write transaction; throwing fails that attempt. */
  readonly beforeWrite?: (what: string) => void
}

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** LMDB under `dir`: every write is a synchronous, durable transaction (the caller answers after it). */
export const lmdbDurableState = async (dir: string, options: LmdbDurableOptions = {}): Promise<DurableState> => {
  mkdirSync(dir, { recursive: true })
  const { open } = await import("lmdb")
  const openEnv = () => {
    const root: RootDatabase = open({ path: dir, maxDbs: 8 })
    const meta: Database<unknown, string> = root.openDB({ name: "meta", encoding: "msgpack" })
    const blocks: Database<StoredBlock, number> = root.openDB({
      name: "blocks",
      encoding: "msgpack",
      keyEncoding: "uint32"
    })
    const receipts: Database<Buffer, string> = root.openDB({ name: "receipts", encoding: "binary" })
    const objects: Database<{ version: number; value: Uint8Array }, string> = root.openDB({
      name: "objects",
      encoding: "msgpack"
    })
    return { root, meta, blocks, receipts, objects }
  }
  let env = openEnv()
  const closing: Array<Promise<void>> = []
  /**
   * One write transaction. lmdb-js's free-space bookkeeping can fail a commit (MDB_BAD_TXN "reserved freelist had
   * a data entry with zero-size", about one bench cluster in 20). That transaction is aborted and the file stays
   * intact (a new process reads it and writes on), but this environment's in-memory free list is not to be trusted:
   * reopen the environment and try once more. A second failure is a DurableWriteError.
   */
  const write = (what: string, body: (e: ReturnType<typeof openEnv>) => void): void => {
    try {
      options.beforeWrite?.(what)
      env.root.transactionSync(() => body(env))
      return
    } catch (first) {
      options.warn?.(`LMDB ${dir}: writing ${what} failed (${reason(first)}); reopening it and trying again`)
      try {
        closing.push(env.root.close())
        env = openEnv()
        options.beforeWrite?.(what)
        env.root.transactionSync(() => body(env))
      } catch (second) {
        throw new DurableWriteError(
          `LMDB ${dir}: writing ${what} failed twice (${reason(first)}; then, reopened: ${reason(second)}); ` +
            `nothing unwritten was answered: restart the coordinator, it resumes from what is on disk`
        )
      }
    }
  }
  return {
    description: `LMDB ${dir}`,
    restore: () => {
      const { meta, blocks, objects, receipts } = env
      const generation = (meta.get("generation") as number | undefined) ?? 0
      const persisted = (meta.get("persisted") as Persistence | undefined) ?? ZERO
      const log: Array<BlockRecord> = []
      for (const { value } of blocks.getRange({ start: persisted.height + 1 })) log.push(fromStored(value))
      if (generation === 0 && persisted.seq === 0 && log.length === 0) return undefined
      const snapshot: Array<PersistedObject> = []
      for (const { key, value } of objects.getRange({})) {
        snapshot.push({ key, version: value.version, value: new Uint8Array(value.value) })
      }
      const next = generation + 1
      write("the fence generation", (e) => e.meta.putSync("generation", next))
      return { generation: next, persisted, snapshot, log, receipts: receipts.getCount() }
    },
    appendBlock: (block) => {
      write(`block ${block.height}`, (e) => e.blocks.putSync(block.height, toStored(block)))
    },
    putReceipts: (rs) => {
      write(`${rs.length} receipts`, (e) => {
        for (const r of rs) e.receipts.putSync(r.txId, Buffer.from(Receipt.encode(r).finish()))
      })
    },
    receipt: (txId) => {
      const bytes = env.receipts.getBinary(txId)
      return bytes === undefined ? undefined : Receipt.decode(bytes)
    },
    persistEpoch: (persisted, objs) => {
      write(`the snapshot of epoch ${persisted.epoch}`, (e) => {
        for (const o of objs) e.objects.putSync(o.key, { version: o.version, value: o.value })
        e.meta.putSync("persisted", persisted)
        for (const { key } of e.blocks.getRange({ end: persisted.height + 1 })) e.blocks.removeSync(key)
      })
    },
    setGeneration: (generation) => {
      write("the fence generation", (e) => e.meta.putSync("generation", generation))
    },
    close: async () => {
      await Promise.all(closing)
      await env.root.close()
    }
  }
}
