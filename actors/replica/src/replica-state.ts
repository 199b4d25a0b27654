/**
 * What one replica process holds: its identity (id and incarnation), the KV state machine, how far it has
 * applied the group's decisions, the members it applies, and what peers catch up from (the decision log and
 * the delivered index). Owned by the replica's apply path (applier.ts); read by the KV service, the catch-up
 * server and the rejoin driver; replaced wholesale only by a snapshot restore.
 */
import { type DeliveredIndex, emptyDeliveredIndex, type Incarnation, newIncarnation } from "@reef/nic"
import { DecisionLog, type DecisionLogLimits } from "./decision-log.js"
import { emptyKvState, type KvStateData } from "./kv-state.js"
import type { ReplicatedApp } from "./replicated-app.js"

export interface ReplicaState {
  readonly id: string
  readonly group: string
  /** This process start: what this replica proposes is its own only when it carries this incarnation. */
  readonly incarnation: Incarnation
  readonly kv: KvStateData
  /** Every instance up to this one is applied. */
  appliedInstance: number
  /** The members of the last applied instance's schedule (changed by decided membership values). */
  members: ReadonlyArray<string>
  /** Catch-up (decision log, delivered index, snapshots) serves single-engine groups only (see engine.ts). */
  readonly singleEngine: boolean
  readonly decisions: DecisionLog
  /** Which values are applied (TOB's delivered index, kept by the host so it matches its own state). */
  delivered: DeliveredIndex
  /** Times this process replaced its state with a peer's snapshot (reported in StateResponse). */
  snapshotsRestored: number
  /** With `--app redis`: what Redis writes are applied to, captured from and restored into (not `kv`). */
  app: ReplicatedApp | undefined
}

export const createReplicaState = (options: {
  readonly id: string
  readonly group: string
  readonly members: ReadonlyArray<string>
  readonly engines?: number
  readonly log?: DecisionLogLimits
  /** A fixed incarnation (tests); a fresh random one otherwise. */
  readonly incarnation?: Incarnation
}): ReplicaState => ({
  id: options.id,
  group: options.group,
  incarnation: options.incarnation ?? newIncarnation(),
  kv: emptyKvState(),
  appliedInstance: 0,
  members: [...options.members],
  singleEngine: (options.engines ?? 1) === 1,
  decisions: new DecisionLog(options.log),
  delivered: emptyDeliveredIndex,
  snapshotsRestored: 0,
  app: undefined
})
