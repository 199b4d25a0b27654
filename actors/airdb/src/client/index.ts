/**
 * @reef/airdb/client: the embedded client and what opening one needs, without the gRPC service or any storage
 * backend's library loaded up front (a process's cold start pays for every module it imports).
 */

export { type Backend, openSegmentStore, type StorageOptions, withFailures } from "../service/storage.js"
export {
  type AirDbClient,
  type ClientStats,
  openClient,
  type ReadResult,
  type ScanResult,
  SnapshotMoved,
  type Tx,
  type TxResult
} from "./client.js"
export * from "./errors.js"
export { type AirDbOptions, DEFAULT_STORE_CONFIG } from "./options.js"
