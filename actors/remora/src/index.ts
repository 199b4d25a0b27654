/**
 * @reef/remora: what Remora's coordinator and workers share. Transactions (admission, Ed25519), contracts (YCSB,
 * token transfer, TPC-C NewOrder + Payment), the state digest and the sequential reference executor, workload
 * generators, and the pure cores (also at `@reef/remora/core`) with their seeded simulator.
 */
export * from "./contracts/contract.js"
export { executeContract } from "./contracts/execute.js"
export { genesisValue } from "./contracts/genesis.js"
export { CONTRACTS, contractNamed } from "./contracts/registry.js"
export * from "./contracts/token.js"
export * from "./contracts/tpcc.js"
export * from "./contracts/ycsb.js"
export * from "./core/index.js"
export { runWorld, type SimConfig, type SimRecord } from "./sim/world.js"
export { StateDigestSum, stateHashOf } from "./state/digest.js"
export { ReferenceExecutor, type ReferenceStatus, type ReferenceStep, type VersionedValue } from "./state/reference.js"
export {
  PUBLIC_KEY_BYTES,
  randomSigningKey,
  SIGNATURE_BYTES,
  SignatureVerifier,
  type SigningKey,
  signBytes,
  signingKeyFromSeed
} from "./tx/signing.js"
export {
  type Admission,
  type AdmissionLimits,
  admit,
  DEFAULT_ADMISSION_LIMITS,
  isWrite,
  keyLayout
} from "./tx/transaction.js"
export * from "./workload/generators.js"
export * from "./workload/hotspot.js"
export { ed25519Signer } from "./workload/signed.js"
export { ZipfGenerator } from "./workload/zipf.js"
