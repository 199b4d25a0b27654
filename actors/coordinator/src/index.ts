/**
 * @reef/coordinator: Remora's coordinator (`reef run coordinator`): accepts signed transactions over
 * reef.v1.Execution, forms blocks, orders them through a ConsensusSource (a fixed window, or a POPUC group),
 * schedules during the consensus window and dispatches to workers on commit; produces receipts.
 */
export { type BlockRef, ConsensusSource, type ConsensusSourceShape, type Decision } from "./consensus-source.js"
export { coordinatorActor } from "./coordinator-actor.js"
export {
  blockDigest,
  type CoordinatorCounters,
  CoordinatorDriver,
  type CoordinatorIo,
  type CoordinatorOptions,
  defaultCoordinatorOptions,
  type SubmitOutcome
} from "./coordinator-driver.js"
export {
  type BlockRecord,
  type DurableState,
  lmdbDurableState,
  memoryDurableState,
  type Restored
} from "./durable-state.js"
export {
  ExecutionCallError,
  type ExecutionClientOptions,
  makeExecutionClient,
  type RemoraClient,
  type Submitted
} from "./execution-client.js"
export { MAX_WATCH_BACKLOG, makeExecutionService, submitFrames } from "./execution-service.js"
export { defaultMempoolLimits, Mempool, type MempoolLimits } from "./mempool.js"
export {
  findPopucReplicas,
  makePopucConsensus,
  type PopucConsensusOptions,
  popucChain,
  popucConsensusLayer,
  replicaAddresses,
  SlotSequencer,
  slotValue
} from "./popuc-consensus.js"
export { ReceiptBook, type ReceiptWaiter } from "./receipts.js"
export {
  type CoordinatorHandle,
  coordinatorStatus,
  EXECUTION_PROTO_FILES,
  type RunCoordinatorOptions,
  runCoordinator
} from "./run-coordinator.js"
export {
  committedOrder,
  receiptOrder,
  referenceHash,
  referenceState,
  type SignedWorkload,
  signedWorkload
} from "./signed-workload.js"
export {
  DEFAULT_WINDOW_MS,
  defaultWindowOptions,
  WindowConsensus,
  type WindowOptions,
  WindowSchedule,
  windowConsensusLayer
} from "./window-consensus.js"
