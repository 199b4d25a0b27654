/**
 * Remora's pure cores: the coordinator (version assignment, ownership, dependency graph, SFS and the baseline
 * policies, scheduler/router metadata copies) and the worker (execution rule, versions, lease transfers,
 * tokens, virtual cores). No clock, no I/O, randomness from an injected seed.
 */
export {
  type AutoscalerParams,
  AutoscalerParamsError,
  type AutoscalerState,
  createAutoscaler,
  defaultAutoscalerParams,
  observe as observeLoad,
  type ScaleDecision,
  type ScaleReason,
  validateAutoscalerParams,
  type WorkerLoad
} from "./autoscaler.js"
export {
  type Architecture,
  type CompletionData,
  type CoordinatorInput,
  type CoordinatorOutput,
  type CoordinatorParams,
  type CoordinatorState,
  type CoordinatorStats,
  createCoordinator,
  defaultCoordinatorParams,
  inflightCount,
  type LostIncarnation,
  poolLoads,
  retiringWorkers,
  type Separation,
  type StatefulTaskData,
  type StatelessTaskData,
  stepCoordinator,
  type Timing
} from "./coordinator.js"
export { Deque } from "./deque.js"
export { type ClosedEpoch, closeEpoch, type LoggedBlock, type PersistedObject, type Persistence } from "./epochs.js"
export { type InflightEntry, InflightWindow } from "./inflight.js"
export {
  COORDINATOR_OWNER,
  KeyIndex,
  type MetadataReader,
  type MetadataWriter,
  ObjectTable,
  OWNER_CODES,
  ownerOf,
  pack,
  SchedulerView,
  versionOf,
  WorkerRegistry
} from "./object-table.js"
export {
  bestCandidate,
  type Candidates,
  type KeySpan,
  leastLoaded,
  mostInputs,
  POLICIES,
  type PolicyName,
  SFS_WEIGHTS,
  ZEUS_WEIGHTS
} from "./placement.js"
export {
  adoptPlan,
  GENESIS_CODE,
  type PlacementCursor,
  type Plan,
  PlannerScratch,
  type PlanOptions,
  planBlock,
  statefulWeight,
  statelessWeight
} from "./planner.js"
export { Prng } from "./prng.js"
export { checkStall, createStallBackstop, type StallBackstop } from "./stall.js"
export {
  dependencyEdges,
  type Keyed,
  type KeyedBlock,
  keyedBlock,
  SubgraphScratch,
  type Subgraphs,
  subgraphs,
  subgraphsOf
} from "./subgraphs.js"
export {
  COORDINATOR_SOURCE,
  GENESIS_SOURCE,
  isWriteAt,
  type Key,
  type ProposedBlock,
  type Source,
  type Step,
  type TxMeta,
  type TxOutcome,
  type WorkerId,
  type WorkerRef
} from "./types.js"
export {
  createWorker,
  type ExecOutcome,
  type StatefulIn,
  type SymmetricIn,
  stepWorker,
  type WorkerInput,
  type WorkerOutput,
  type WorkerParams,
  type WorkerState,
  type WorkerStats,
  workerLoad
} from "./worker.js"
