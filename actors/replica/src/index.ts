/**
 * @reef/replica: the host server next to each POPUC engine: a replicated, linearizable KV store served over
 * gRPC (reef.v1.KV), its client library with the paper's deployment modes, and a linearizability checker.
 */

export { CatchUpRpc, SnapshotChunkRpc } from "./catch-up-server.js"
export * from "./history.js"
export { type DeploymentMode, KvCallError, type KvClient, type KvClientOptions, makeKvClient } from "./kv-client.js"
export { DEFAULT_MAX_KEY_BYTES, DEFAULT_MAX_VALUE_BYTES } from "./kv-service.js"
export {
  applyCommand,
  chainValue,
  emptyKvState,
  GENESIS_HASH,
  type HashChain,
  type KvResult,
  type KvStateData
} from "./kv-state.js"
export * from "./linearizability.js"
export { formatLostWrite, type LostWrite, lostWrites } from "./lost-writes.js"
export { REPLICA_ROLE, type ReplicaHandle, type ReplicaOptions, runReplica } from "./replica.js"
export { type RejoinKind, ReplicaTelemetry } from "./replica-telemetry.js"
