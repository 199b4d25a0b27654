/**
 * The simulated coordinator's disk: a model of `actors/coordinator/src/durable-state.ts` (LMDB under
 * `--data-dir`) with the same tables and the same writes, each one atomic like its LMDB transaction:
 *
 * - `appendBlock`: one committed block, before any of it is dispatched;
 * - `putReceipts`: a turn's receipts, before any of them is answered;
 * - `persistEpoch`: the snapshot objects, `meta.persisted`, and the removal of the blocks it covers, together;
 * - `setGeneration`: the fence generation, before any worker hears of it;
 * - `restore`: a new incarnation reads it all and writes the next generation before it does anything else.
 *
 * Nothing else survives a coordinator kill. What the disk holds is what a restarted coordinator may know.
 */
import type { LoggedBlock, PersistedObject, Persistence } from "../core/epochs.js"
import type { Key, TxOutcome } from "../core/types.js"

/** A receipt as the coordinator gives it (the fields a client can compare; times are the shell's clock). */
export interface SimReceipt {
  readonly txId: string
  readonly seq: number
  readonly height: number
  readonly status: TxOutcome
  readonly detail: string
  readonly worker: string
  readonly leaseTransfers: number
}

export interface Restored<P> {
  readonly generation: number
  readonly persisted: Persistence
  readonly snapshot: ReadonlyArray<PersistedObject>
  readonly log: ReadonlyArray<LoggedBlock<P>>
  readonly receipts: number
}

const ZERO: Persistence = { epoch: 0, seq: 0, height: 0 }

export class SimDisk<P> {
  private readonly blocks = new Map<number, LoggedBlock<P>>()
  private readonly receipts = new Map<string, SimReceipt>()
  private readonly objects = new Map<Key, { readonly version: number; readonly value: Uint8Array }>()
  private generation: number | undefined
  private persisted: Persistence | undefined
  /** Writes so far (a restart's replay command says how far a run got). */
  writes = 0

  /** Durable state of an earlier incarnation with the generation to fence with; undefined on a fresh start. */
  restore(): Restored<P> | undefined {
    const generation = this.generation ?? 0
    const persisted = this.persisted ?? ZERO
    const log = [...this.blocks.values()].filter((b) => b.height > persisted.height).sort((a, b) => a.height - b.height)
    if (generation === 0 && persisted.seq === 0 && log.length === 0) return undefined
    const snapshot: Array<PersistedObject> = [...this.objects].map(([key, o]) => ({ key, ...o }))
    const next = generation + 1
    this.write(() => {
      this.generation = next
    })
    return { generation: next, persisted, snapshot, log, receipts: this.receipts.size }
  }

  appendBlock(block: LoggedBlock<P>): void {
    this.write(() => this.blocks.set(block.height, { height: block.height, firstSeq: block.firstSeq, txs: block.txs }))
  }

  putReceipts(receipts: ReadonlyArray<SimReceipt>): void {
    this.write(() => {
      for (const r of receipts) this.receipts.set(r.txId, r)
    })
  }

  receipt(txId: string): SimReceipt | undefined {
    return this.receipts.get(txId)
  }

  allReceipts(): ReadonlyMap<string, SimReceipt> {
    return this.receipts
  }

  persistEpoch(persisted: Persistence, objects: ReadonlyArray<PersistedObject>): void {
    this.write(() => {
      for (const o of objects) this.objects.set(o.key, { version: o.version, value: o.value })
      this.persisted = persisted
      for (const height of [...this.blocks.keys()]) if (height <= persisted.height) this.blocks.delete(height)
    })
  }

  setGeneration(generation: number): void {
    this.write(() => {
      this.generation = generation
    })
  }

  /** The snapshot's objects (for the checker: each must be the sequential execution's version). */
  snapshot(): ReadonlyArray<PersistedObject> {
    return [...this.objects].map(([key, o]) => ({ key, ...o }))
  }

  private write(f: () => void): void {
    f()
    this.writes++
  }
}
