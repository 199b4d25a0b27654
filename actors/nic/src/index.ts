/**
 * @reef/nic: POPUC, the paper's SmartNIC consensus, as a pure core (`core/`), a seeded simulator (`sim/`),
 * the engine shell that runs the core in a worker thread over NATS, and the pipelined aggregator.
 */

export { type AggregatorState, aggregate, createAggregator, type EngineDecision } from "./aggregator.js"
export * from "./core/index.js"
export {
  type AppliedBatch,
  DEFAULT_MAX_BATCH_BYTES,
  EngineError,
  type EngineHandlers,
  type EngineOptions,
  type NicEngine,
  type ProposalRef,
  ROUND_CLOSE_MODES,
  type RoundClose,
  startEngine
} from "./engine.js"
export {
  createEngineLoop,
  DEFAULT_ROUND_VALUES,
  type EngineCommand,
  type EngineConfig,
  type EngineEvent,
  type EngineIo,
  type EngineLoop,
  type EngineStats,
  ROUND_VALUES_MODES,
  type RoundValues
} from "./engine-loop.js"
export { calibrationSubject, engineGroupSubject, engineSubject, probeSubject } from "./engine-subjects.js"
export { newIncarnation } from "./incarnation.js"
export { LatencyHistogram } from "./latency-histogram.js"
export { nicActor } from "./nic-actor.js"
export { ENGINE_THREAD_NAME } from "./thread-name.js"
export { type DecodedWire, decodeWire, encodeWire, ownPayload, valueFromWire, valueToWire } from "./wire.js"
