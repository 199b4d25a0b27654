/**
 * @reef/airdb: AirDB, a transactional key-value store on serverless state machine replication (S2MR,
 * ../shared/papers/airdb-s2mr.txt). There is no server: every client keeps the command log and the state log
 * on shared storage (segments: JetStream, Redis, Azure Append Blob), materialises what it needs and takes part
 * in snapshotting. `openClient` embeds it in a program; the `airdb` role serves it over gRPC.
 */
export {
  type AirDbClient,
  type ClientStats,
  openClient,
  type ReadResult,
  type ScanResult,
  SnapshotMoved,
  type Tx,
  type TxResult
} from "./client/client.js"
export * from "./client/errors.js"
export { type AirDbOptions, DEFAULT_STORE_CONFIG } from "./client/options.js"
export type { Isolation } from "./core/types.js"
export * from "./segment/index.js"
export { AIRDB_DEFAULT_SCAN_LIMIT, airDbGrpcService, toHandlerError } from "./service/airdb-service.js"
export { type AirDbHandle, AirDbStartError, type RunAirDbOptions, runAirDb, serveAirDb } from "./service/run-airdb.js"
export {
  BACKENDS,
  type Backend,
  openSegmentStore,
  StorageConfigError,
  type StorageOptions,
  withFailures
} from "./service/storage.js"
