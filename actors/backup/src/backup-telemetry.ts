/**
 * The backup's metrics (Effect metrics: every `reef run` process serves them on /metrics and over OTLP),
 * tagged with the chain and the backup, created at zero when the backup starts.
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import type { BlockReplay } from "./replay/replayer.js"

const blocksReplayed = Metric.counter("reef_backup_blocks_replayed_total", {
  description: "Blocks replayed, verified against the primary's state hash and committed",
  incremental: true
})
const hintErrors = Metric.counter("reef_backup_hint_errors_total", {
  description: "Blocks replayed without a usable hint (missing, malformed, for another block)",
  incremental: true
})
const hintsRejected = Metric.counter("reef_backup_hints_rejected_total", {
  description: "Blocks whose hinted run differed from the primary's hash (re-executed on demand)",
  incremental: true
})
const cacheMisses = Metric.counter("reef_backup_cache_misses_total", {
  description: "Reads a block's prefetched cache lacked (served on demand)",
  incremental: true
})
const head = Metric.gauge("reef_backup_head_block", { description: "Last block verified and committed" })
const lag = Metric.gauge("reef_backup_lag_blocks", { description: "Blocks behind the primary's stream" })
const blockDuration = Metric.histogram(
  "reef_backup_block_ms",
  // 0.25 ms .. ~8 s
  MetricBoundaries.exponential({ start: 0.25, factor: 2, count: 16 }),
  "Time the executor spent on a block: waiting for its prefetch plus executing it, in ms"
)

export class BackupTelemetry {
  private readonly tags: ReadonlyArray<MetricLabel.MetricLabel>

  constructor(chain: string, backup: string) {
    this.tags = [MetricLabel.make("chain", chain), MetricLabel.make("backup", backup)]
    for (const counter of [blocksReplayed, hintErrors, hintsRejected, cacheMisses]) counter.unsafeUpdate(0, this.tags)
    head.unsafeUpdate(0, this.tags)
    lag.unsafeUpdate(0, this.tags)
    blockDuration.unsafeValue(this.tags)
  }

  onBlock(record: BlockReplay, lagBlocks: number): void {
    blocksReplayed.unsafeUpdate(1, this.tags)
    if (record.hintError !== undefined) hintErrors.unsafeUpdate(1, this.tags)
    if (record.hintRejected) hintsRejected.unsafeUpdate(1, this.tags)
    if (record.misses > 0) cacheMisses.unsafeUpdate(record.misses, this.tags)
    head.unsafeUpdate(record.number, this.tags)
    lag.unsafeUpdate(lagBlocks, this.tags)
    blockDuration.unsafeUpdate(record.waitMs + record.execMs, this.tags)
  }

  onPrimaryHead(lagBlocks: number): void {
    lag.unsafeUpdate(lagBlocks, this.tags)
  }
}
