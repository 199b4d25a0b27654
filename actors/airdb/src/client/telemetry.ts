/**
 * AirDB's metrics (Effect metrics: every process's /metrics and OTLP export them). Series are tagged with the
 * store and created at zero when a client opens, so a quiet client's metrics exist too.
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import type { AbortReason } from "../core/types.js"

const transactions = Metric.counter("reef_airdb_transactions_total", {
  description: "Transaction intentions this client appended, by outcome (committed, aborted)",
  incremental: true
})
const tailSyncs = Metric.counter("reef_airdb_tail_syncs_total", {
  description: "Tail checks of the command log (bus-stand rides and writer syncs)",
  incremental: true
})
const entriesApplied = Metric.counter("reef_airdb_entries_applied_total", {
  description: "Command-log entries this client replayed",
  incremental: true
})
const appendConflicts = Metric.counter("reef_airdb_append_conflicts_total", {
  description: "Conditional appends refused because another client got to the tail first",
  incremental: true
})
const snapshots = Metric.counter("reef_airdb_snapshots_created_total", {
  description: "Snapshots this client materialised (kind: extend, merge)",
  incremental: true
})
const aborts = Metric.counter("reef_airdb_aborts_total", {
  description:
    "Aborted attempts of this client's transactions, by reason (conflict, snapshot-too-old, invalid-snapshot: " +
    "decided by the log; snapshot-moved: a read found the key changed after the snapshot and the attempt restarted)",
  incremental: true
})
const tailSyncMs = Metric.histogram(
  "reef_airdb_tail_sync_ms",
  MetricBoundaries.exponential({ start: 0.25, factor: 2, count: 18 }),
  "Time of one tail sync (a bus ride: read and apply the command log's new entries), in ms"
)
const unmaterialised = Metric.gauge("reef_airdb_unmaterialised_entries", {
  description: "n − i_k: command entries after the snapshot chain's end (the timely bound keeps it ≤ (1+ε)B)"
})
const coldStart = Metric.histogram(
  "reef_airdb_cold_start_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 18 }),
  "Time to open a client: state log, snapshot indexes and command-log tail, in ms"
)

const ABORT_REASONS: ReadonlyArray<AbortReason | "snapshot-moved"> = [
  "conflict",
  "snapshot-too-old",
  "invalid-snapshot",
  "snapshot-moved"
]

export class AirDbTelemetry {
  private readonly tags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly committedTags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly abortedTags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly extendTags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly mergeTags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly abortTags: ReadonlyMap<string, ReadonlyArray<MetricLabel.MetricLabel>>

  constructor(store: string) {
    this.tags = [MetricLabel.make("store", store)]
    this.committedTags = [...this.tags, MetricLabel.make("outcome", "committed")]
    this.abortedTags = [...this.tags, MetricLabel.make("outcome", "aborted")]
    this.extendTags = [...this.tags, MetricLabel.make("kind", "extend")]
    this.mergeTags = [...this.tags, MetricLabel.make("kind", "merge")]
    for (const t of [this.committedTags, this.abortedTags]) transactions.unsafeUpdate(0, t)
    for (const t of [this.extendTags, this.mergeTags]) snapshots.unsafeUpdate(0, t)
    for (const c of [tailSyncs, entriesApplied, appendConflicts]) c.unsafeUpdate(0, this.tags)
    this.abortTags = new Map(
      ABORT_REASONS.map((reason) => [reason, [...this.tags, MetricLabel.make("reason", reason)]] as const)
    )
    for (const t of this.abortTags.values()) aborts.unsafeUpdate(0, t)
    unmaterialised.unsafeUpdate(0, this.tags)
    // The histogram's series too (empty buckets, no observation): dashboards read it before the first sync.
    tailSyncMs.unsafeValue(this.tags)
  }

  onOwnOutcome(committed: boolean): void {
    transactions.unsafeUpdate(1, committed ? this.committedTags : this.abortedTags)
  }
  onSync(): void {
    tailSyncs.unsafeUpdate(1, this.tags)
  }
  onEntry(): void {
    entriesApplied.unsafeUpdate(1, this.tags)
  }
  onAppendConflict(): void {
    appendConflicts.unsafeUpdate(1, this.tags)
  }
  onSnapshot(kind: "extend" | "merge"): void {
    snapshots.unsafeUpdate(1, kind === "extend" ? this.extendTags : this.mergeTags)
  }
  onAbort(reason: AbortReason | "snapshot-moved"): void {
    const tags = this.abortTags.get(reason)
    if (tags !== undefined) aborts.unsafeUpdate(1, tags)
  }
  onTailSync(ms: number, unmaterialisedEntries: number): void {
    tailSyncMs.unsafeUpdate(ms, this.tags)
    unmaterialised.unsafeUpdate(unmaterialisedEntries, this.tags)
  }
  onColdStart(ms: number): void {
    coldStart.unsafeUpdate(ms, this.tags)
  }
}
