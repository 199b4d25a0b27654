/**
 * What a replica reports about its consensus, two ways:
 *
 *   - metrics (Effect's registry, so `/metrics` and OTLP export them): instances decided, rounds, the
 *     duration of each instance (proposal to decision: the consensus part of a write's latency), the time
 *     each KV request spent in the replica (arrival to answer, by operation), self-quits,
 *     rejoins (as a learner or by state transfer), and, sampled with each heartbeat, the applied instance,
 *     applied commands, keys and pending values;
 *   - a role status in its heartbeats (`reef status` shows it): its group, applied instance, rounds per second,
 *     instances per second (for the lag column), self-quits, rejoins, and whether it is rejoining now.
 *
 * Events are counted as they happen, from the replica's callbacks (plain calls, no fiber); the status is read
 * from the replica's state once per heartbeat. Every series is tagged with the group and the replica.
 */
import type { AppliedBatch } from "@reef/nic"
import type { StateResponse } from "@reef/proto"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricLabel from "effect/MetricLabel"
import * as MetricLabelModule from "effect/MetricLabel"

const instancesDecided = Metric.counter("reef_popuc_instances_decided_total", {
  description: "Consensus instances this replica decided and applied",
  incremental: true
})
const roundsDecided = Metric.counter("reef_popuc_rounds_total", {
  description: "Rounds of the instances this replica decided (two per failure-free instance)",
  incremental: true
})
const instanceDuration = Metric.histogram(
  "reef_popuc_instance_duration_ms",
  // 0.25 ms .. ~8 s
  MetricBoundaries.exponential({ start: 0.25, factor: 2, count: 16 }),
  "Time from an instance's proposal to its decision at this replica, in ms"
)
const selfQuits = Metric.counter("reef_popuc_self_quits_total", {
  description: "Times this replica's engine self-quit (excluded or behind) and had to rejoin",
  incremental: true
})
const rejoins = Metric.counter("reef_popuc_rejoins_total", {
  description: "Times this replica's engine took part again after a self-quit (how: learner or transfer)",
  incremental: true
})
const appliedInstance = Metric.gauge("reef_popuc_applied_instance", {
  description: "Last consensus instance applied by this replica"
})
const pendingValues = Metric.gauge("reef_popuc_pending_values", {
  description: "Values proposed by this replica and not decided yet"
})
const roundPeriod = Metric.gauge("reef_popuc_round_period_ms", {
  description: "The engine's round timer period (calibrated ΔI + ΔW + ΔD), in ms"
})
const commandsApplied = Metric.counter("reef_kv_commands_applied_total", {
  description: "KV commands (writes and read barriers) applied by this replica",
  incremental: true
})
const keys = Metric.gauge("reef_kv_keys", { description: "Keys in this replica's KV state" })
const requestDuration = Metric.histogram(
  "reef_kv_request_duration_ms",
  // 0.125 ms .. ~4 s
  MetricBoundaries.exponential({ start: 0.125, factor: 2, count: 16 }),
  "Time from a KV request's arrival at this replica to its answer (proposal, consensus, application), in ms"
)

/** Operations whose latency is measured: writes by their command, reads behind a barrier. */
export type KvOperation = "set" | "delete" | "compareAndSet" | "get"
const OPERATIONS: ReadonlyArray<KvOperation> = ["set", "delete", "compareAndSet", "get"]

export type RejoinKind = "learner" | "transfer"

export class ReplicaTelemetry {
  private readonly group: string
  private readonly tags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly learnerTags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly transferTags: ReadonlyArray<MetricLabel.MetricLabel>
  private readonly operationTags: ReadonlyMap<string, ReadonlyArray<MetricLabel.MetricLabel>>
  private selfQuitCount = 0
  private rejoinCount = 0
  private appliedCommandsSeen = 0
  private previous: { readonly atMs: number; readonly rounds: number; readonly instance: number } | undefined

  constructor(group: string, replica: string) {
    this.group = group
    this.tags = [MetricLabelModule.make("group", group), MetricLabelModule.make("replica", replica)]
    this.learnerTags = [...this.tags, MetricLabelModule.make("how", "learner")]
    this.transferTags = [...this.tags, MetricLabelModule.make("how", "transfer")]
    this.operationTags = new Map(OPERATIONS.map((op) => [op, [...this.tags, MetricLabelModule.make("op", op)]]))
    // Every series exists from the start (at zero): dashboards and alerts see a healthy replica's metrics too.
    for (const counter of [instancesDecided, roundsDecided, selfQuits, commandsApplied])
      counter.unsafeUpdate(0, this.tags)
    for (const how of [this.learnerTags, this.transferTags]) rejoins.unsafeUpdate(0, how)
    instanceDuration.unsafeValue(this.tags)
    for (const tags of this.operationTags.values()) requestDuration.unsafeValue(tags)
  }

  /** A KV request answered (or failed) `ms` after it arrived; per write or read, so it only records. */
  onRequestDone(operation: string, ms: number): void {
    const tags = this.operationTags.get(operation)
    if (tags !== undefined) requestDuration.unsafeUpdate(ms, tags)
  }

  /** One decided instance, applied in merged order. */
  onApplied(batch: AppliedBatch): void {
    instancesDecided.unsafeUpdate(1, this.tags)
    roundsDecided.unsafeUpdate(batch.rounds, this.tags)
    instanceDuration.unsafeUpdate(batch.elapsedMs, this.tags)
  }

  onSelfQuit(): void {
    this.selfQuitCount++
    selfQuits.unsafeUpdate(1, this.tags)
  }

  onRejoined(how: RejoinKind): void {
    this.rejoinCount++
    rejoins.unsafeUpdate(1, how === "learner" ? this.learnerTags : this.transferTags)
  }

  /**
   * The role status for a heartbeat, from the replica's state now; also samples the state's gauges. Rates are
   * over the time since the previous call (one heartbeat interval).
   */
  status(state: StateResponse, rejoining: boolean, nowMs: number): Record<string, string> {
    const rounds = state.engine?.roundsDecided ?? 0
    const instance = state.appliedInstance
    const seconds = this.previous === undefined ? 0 : (nowMs - this.previous.atMs) / 1000
    const rate = (now: number, before: number) => (seconds > 0 ? Math.max(0, now - before) / seconds : 0)
    const roundsPerSecond = this.previous === undefined ? 0 : rate(rounds, this.previous.rounds)
    const instancesPerSecond = this.previous === undefined ? 0 : rate(instance, this.previous.instance)
    this.previous = { atMs: nowMs, rounds, instance }

    appliedInstance.unsafeUpdate(instance, this.tags)
    pendingValues.unsafeUpdate(state.engine?.pending ?? 0, this.tags)
    roundPeriod.unsafeUpdate(state.engine?.roundPeriodMs ?? 0, this.tags)
    keys.unsafeUpdate(state.keys, this.tags)
    // A snapshot install can move the count back (it is the peer's count then): count only what is new.
    commandsApplied.unsafeUpdate(Math.max(0, state.appliedCommands - this.appliedCommandsSeen), this.tags)
    this.appliedCommandsSeen = Math.max(this.appliedCommandsSeen, state.appliedCommands)

    return {
      group: this.group,
      applied: String(instance),
      "rounds/s": roundsPerSecond.toFixed(0),
      "instances/s": instancesPerSecond.toFixed(1),
      "self-quits": String(this.selfQuitCount),
      rejoins: String(this.rejoinCount),
      rejoining: rejoining ? "yes" : "no"
    }
  }
}
