/**
 * @reef/chain: the Ira primary's world (paper: ira.md). A state store shaped like reth's on LMDB, a
 * deterministic contract runtime whose accesses are only known by executing, a workload calibrated to the
 * paper's Ethereum figures, the hint recorder and codec, and the `chain` primary that executes blocks and
 * publishes them with their hints.
 */

export * from "./hint/compression.js"
export * from "./hint/errors.js"
export * from "./hint/format.js"
export { HintRecorder } from "./hint/recorder.js"
export {
  CHAIN_ROLE,
  ChainError,
  type ChainHandle,
  type ChainOptions,
  decodeChainInfo,
  runChain
} from "./primary/chain-actor.js"
export { executeAsPrimary, type PrimaryBlock } from "./primary/execute.js"
export * from "./primary/streams.js"
export {
  type AccessObserver,
  type AccessRecorder,
  BlockExecution,
  ChainContext,
  type PreState,
  Revert,
  stateChangeHash
} from "./runtime/execution.js"
export * from "./runtime/layout.js"
export { Permutation, Prng } from "./runtime/mix.js"
export * from "./runtime/transactions.js"
export * from "./state/errors.js"
export * from "./state/keys.js"
export { MapState, StateModel } from "./state/model.js"
export * from "./state/store.js"
export * from "./state/store-state.js"
export * from "./workload/build.js"
export * from "./workload/calibration.js"
export * from "./workload/chain-spec.js"
export * from "./workload/generator.js"
export * from "./workload/genesis.js"
export * from "./workload/testing.js"
