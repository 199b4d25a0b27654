/**
 * @reef/backup: Ira's backup (paper: ira.md §4.2, App. E). Replays a primary's blocks from compact hints:
 * a sorted, parallel prefetch of each batch's state, then execution from per-block caches, with the
 * state-change hash checked after every block. Also the baseline it is measured against.
 */

export { BACKUP_ROLE, BackupError, type BackupHandle, type BackupOptions, runBackup } from "./backup-actor.js"
export { BackupClientError, backupStatus, watchReplay } from "./client.js"
export {
  type BatchedBlock,
  type BatchState,
  type BlockVerdict,
  createFollower,
  defaultFollowerParams,
  type ExecMode,
  type FollowerCounters,
  type FollowerInput,
  type FollowerOutput,
  type FollowerParams,
  type FollowerPhase,
  type FollowerState,
  type FollowerStep,
  type HintFailure,
  type HintVerdict,
  lagOf,
  type StreamBlock,
  stepFollower
} from "./core/follower.js"
export {
  type BatchBlock,
  type BatchPlan,
  type PlannedBlock,
  planBatch,
  type Slice,
  sliceBySeeks
} from "./core/plan.js"
export { type BaselineBlock, replayBaseline } from "./replay/baseline.js"
export { OnDemandState, PendingWrites, PrefetchedState } from "./replay/prefetched-state.js"
export { type BatchRead, ReaderError, ReaderPool } from "./replay/reader-pool.js"
export type { ReadStats } from "./replay/reader-protocol.js"
export { stall, stateReader } from "./replay/remote-disk.js"
export {
  BackupDivergedError,
  type BatchReplay,
  type BlockReplay,
  CommitError,
  decodeHintFrame,
  type FollowConfig,
  type FollowerSource,
  follow,
  type MakeSource,
  type Offer,
  type ReplayBlock,
  type ReplayConfig,
  type ReplayObserver,
  type ReplaySummary,
  replay,
  type TakeBlocks,
  takeFromArray
} from "./replay/replayer.js"
export { jetStreamSource, type StreamSourceOptions } from "./stream-source.js"
