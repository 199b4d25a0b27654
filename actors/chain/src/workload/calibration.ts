/**
 * Measures what the paper's §3 and Appendix G measure on Ethereum, on our executed blocks, so the workload
 * can be checked against them: per-block unique keys and operations, intra-block reuse, key lifespans,
 * consecutive-block overlap, the source mix of a historical replay, contract concentration.
 *
 * Source mix is that of replaying a window of blocks against a store whose head is past the window (the
 * paper's setup: re-executing history on an archive): a key a block reads is a change-set key if it changes
 * at or after that block, otherwise plain if it holds a value, otherwise zero.
 */
import { percentileOfSorted } from "@reef/stats"
import type { AccessRecorder } from "../runtime/execution.js"
import type { BlockOutcome } from "../runtime/transactions.js"
import type { Address, StorageKey } from "../state/keys.js"
import { ADDRESS_BYTES } from "../state/keys.js"
import { Source } from "../state/store.js"

/** The paper's figures (§3.2, §4.1, Appendix G) our workload is calibrated against. */
export const PAPER_FIGURES = {
  medianUniqueKeys: 1806,
  p95UniqueKeys: 3920,
  medianOps: 8629,
  medianStorageOps: 6587,
  repeatedAccessShare: 0.777,
  singleBlockKeyShare: 0.724,
  consecutiveOverlap: 0.124,
  plainShare: 0.466,
  zeroShare: 0.105,
  changesetShare: 0.43,
  top3ContractShare: 0.422,
  top10ContractShare: 0.636
} as const

export type CalibrationFigures = { -readonly [K in keyof typeof PAPER_FIGURES]: number } & {
  readonly blocks: number
  readonly revertShare: number
}

interface BlockRecord {
  readonly number: number
  /** Keys first accessed by the block, with their value before it. */
  readonly keys: Map<StorageKey, number>
  storageOps: number
  callOps: number
}

/**
 * Collects per-block accesses of a run of consecutive blocks. Use `recorderFor(block)` as the block's
 * access recorder and `observer` as its access observer, then `finish(block, outcome)`.
 */
export class CalibrationCollector {
  private readonly records: Array<BlockRecord> = []
  /** The last block that changed each key. */
  private readonly lastChange = new Map<StorageKey, number>()
  private readonly contractOps = new Map<Address, number>()
  private transactions = 0
  private reverted = 0
  private current: BlockRecord | undefined

  constructor(
    /** Blocks before this one are executed (and their changes counted) but not measured. */
    readonly windowStart: number
  ) {}

  recorderFor(block: number): AccessRecorder | undefined {
    if (block < this.windowStart) return undefined
    const record: BlockRecord = { number: block, keys: new Map(), storageOps: 0, callOps: 0 }
    this.current = record
    return {
      storage: (key, _source, value) => void record.keys.set(key, value),
      code: () => undefined
    }
  }

  readonly observer = (key: StorageKey): void => {
    if (this.current === undefined) return
    const address = key.slice(0, ADDRESS_BYTES)
    this.contractOps.set(address, (this.contractOps.get(address) ?? 0) + 1)
  }

  finish(block: number, outcome: BlockOutcome): void {
    for (const change of outcome.changes) this.lastChange.set(change.key, block)
    if (this.current === undefined || this.current.number !== block) return
    this.current.storageOps = outcome.counters.storageOps
    this.current.callOps = outcome.counters.callOps
    this.transactions += outcome.statuses.length
    this.reverted += outcome.counters.reverted
    this.records.push(this.current)
    this.current = undefined
  }

  /** The source a replay of `block` against the final store would read `key` from. */
  private sourceOf(key: StorageKey, block: number, before: number): Source {
    if ((this.lastChange.get(key) ?? 0) >= block) return Source.Changeset
    return before === 0 ? Source.Zero : Source.Plain
  }

  figures(): CalibrationFigures {
    const uniques = this.records.map((r) => r.keys.size).sort((a, b) => a - b)
    const ops = this.records.map((r) => r.storageOps + r.callOps).sort((a, b) => a - b)
    const storageOps = this.records.map((r) => r.storageOps).sort((a, b) => a - b)
    const totalOps = this.records.reduce((s, r) => s + r.storageOps, 0)
    const totalUnique = this.records.reduce((s, r) => s + r.keys.size, 0)
    const blocksPerKey = new Map<StorageKey, number>()
    const sources = [0, 0, 0]
    const overlaps: Array<number> = []
    let previous: BlockRecord | undefined
    for (const record of this.records) {
      let shared = 0
      for (const [key, before] of record.keys) {
        blocksPerKey.set(key, (blocksPerKey.get(key) ?? 0) + 1)
        sources[this.sourceOf(key, record.number, before)]!++
        if (previous?.keys.has(key)) shared++
      }
      if (previous !== undefined && record.keys.size > 0) overlaps.push(shared / record.keys.size)
      previous = record
    }
    let single = 0
    for (const n of blocksPerKey.values()) if (n === 1) single++
    const contractShares = [...this.contractOps.values()].sort((a, b) => b - a)
    const allContractOps = contractShares.reduce((s, n) => s + n, 0) || 1
    const top = (n: number) => contractShares.slice(0, n).reduce((s, x) => s + x, 0) / allContractOps
    const totalSources = sources[0]! + sources[1]! + sources[2]! || 1
    return {
      blocks: this.records.length,
      medianUniqueKeys: percentileOfSorted(uniques, 50),
      p95UniqueKeys: percentileOfSorted(uniques, 95),
      medianOps: percentileOfSorted(ops, 50),
      medianStorageOps: percentileOfSorted(storageOps, 50),
      repeatedAccessShare: totalOps === 0 ? 0 : (totalOps - totalUnique) / totalOps,
      singleBlockKeyShare: blocksPerKey.size === 0 ? 0 : single / blocksPerKey.size,
      consecutiveOverlap: overlaps.length === 0 ? 0 : overlaps.reduce((s, x) => s + x, 0) / overlaps.length,
      plainShare: sources[Source.Plain]! / totalSources,
      zeroShare: sources[Source.Zero]! / totalSources,
      changesetShare: sources[Source.Changeset]! / totalSources,
      top3ContractShare: top(3),
      top10ContractShare: top(10),
      revertShare: this.transactions === 0 ? 0 : this.reverted / this.transactions
    }
  }
}

/** Rows of (figure, generated, paper) for a table. */
export const calibrationRows = (figures: CalibrationFigures): Array<[string, number, number]> =>
  (Object.keys(PAPER_FIGURES) as Array<keyof typeof PAPER_FIGURES>).map((name) => [
    name,
    figures[name],
    PAPER_FIGURES[name]
  ])
