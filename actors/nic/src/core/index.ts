/**
 * The pure POPUC core: one consensus instance (Alg. 2), back-to-back instances with membership changes
 * (ckcucmi), sync-start (Alg. 3), total-order broadcast (Alg. 4) and the round timer (§6.2). No clock, no
 * I/O, no randomness: a shell feeds inputs and carries out the outputs.
 */
export {
  type DeliveredIndex,
  type DeliveredWindow,
  deliveredIndexOf,
  deliveredWindows,
  emptyDeliveredIndex,
  isDelivered,
  markDelivered
} from "./delivered-index.js"
export { afterDelivery, hearRound1, LEARN_AHEAD, type LearnerState, relayedDecision, startLearning } from "./learner.js"
export {
  DEFAULT_MEMBERSHIP_DELAY,
  initialSchedule,
  isValidMembers,
  type MembershipEpoch,
  type MembershipSchedule,
  membersAt,
  scheduleAfterDecision
} from "./membership.js"
export {
  adoptDecision,
  attemptOf,
  closeRound,
  createInstance,
  type InstanceInput,
  type InstanceOutput,
  type InstanceParams,
  type InstanceState,
  type InstanceStatus,
  type InstanceStep,
  type StepInstance,
  stepInstance,
  thresholdOf,
  unheardPeers
} from "./popuc-instance.js"
export {
  createMulti,
  currentInstance,
  type MultiInput,
  type MultiOutput,
  type MultiParams,
  type MultiState,
  type MultiStatus,
  type MultiStep,
  type ProposalSource,
  type StashedMsg,
  stepMulti
} from "./popuc-multi.js"
export {
  choosePeer,
  createRejoin,
  DEFAULT_ALL_PEERS_MS,
  DEFAULT_ASK_EVERY_MS,
  DEFAULT_MAJORITY_MS,
  DEFAULT_RETRY_MS,
  type InstanceAttempt,
  isRunning,
  learnMs,
  mayInstallSnapshot,
  type PeerAnswer,
  type PeerChoice,
  type PeerStatus,
  peerStatus,
  type RejoinInput,
  type RejoinOutput,
  type RejoinParams,
  type RejoinPhase,
  type RejoinState,
  type RejoinStep,
  stepRejoin,
  waitForPeers,
  watchdogMs
} from "./rejoin.js"
export {
  type ArmedTimer,
  type CalibrationOptions,
  calibrateRoundTimer,
  closesOnAllHeard,
  instanceGapMs,
  makeRoundTimerConfig,
  nextRoundDurationMs,
  percentile,
  type RoundCloseCause,
  type RoundTimerConfig,
  roundPeriodMs,
  timerDeadline
} from "./round-timer.js"
export {
  createSyncStart,
  leaderOf,
  type SyncStartInput,
  type SyncStartMsg,
  type SyncStartOutput,
  type SyncStartState,
  type SyncStartStep,
  stepSyncStart
} from "./sync-start.js"
export {
  createTob,
  DEFAULT_MAX_PENDING,
  type DecidedInstance,
  isTakingPart,
  type JoinSnapshot,
  scheduleOf,
  selectBatch,
  stepTob,
  type TobInput,
  type TobOutput,
  type TobParams,
  type TobPhase,
  type TobState,
  type TobStep,
  type WireMsg
} from "./tob.js"
export type { Incarnation, ProcessId, RoundMsg, Step, Value, ValueKind, ValueRef } from "./types.js"
export {
  clientValue,
  compareIds,
  compareValues,
  EMPTY_PAYLOAD,
  heartbeatValue,
  isOwnValue,
  membershipValue,
  sameValue,
  sortIds,
  sortValues,
  VALUE_OVERHEAD_BYTES,
  valueKey,
  valueRef,
  valueSizeBytes
} from "./value.js"
