/**
 * @reef/kernel: the actor kernel every Reef role is built on. See ARCHITECTURE.md for the subject scheme,
 * the envelope and how a role is built (pure core + thin shell).
 */
export {
  type ActorContext,
  ActorCrashed,
  type ActorDefinition,
  DEFAULT_MAILBOX_CAPACITY,
  defaultRestartPolicy,
  defineActor,
  type Handler,
  type HandlerFailure,
  onAsk,
  onTell,
  onTellBatch,
  type Rpc,
  rpc
} from "./actor.js"
export { type ActorRef, incarnationAfter, PingRpc, type SpawnOptions, spawn } from "./actor-runtime.js"
/** The wire form of `tellMany` (benchmarks encode batches exactly as the messenger does). */
export { encodeBatch } from "./batch-codec.js"
export {
  Bus,
  type BusEvent,
  type BusMessage,
  type BusShape,
  type Endpoint,
  FixedHeaders,
  type Headers,
  type ServiceSpec
} from "./bus.js"
export { makeMemoryBus, memoryBusLayer } from "./bus-memory.js"
export { makeNatsBus, Nats, type NatsOptions, natsBusLayer, natsConnectionLayer, natsLayer } from "./bus-nats.js"
export {
  type Codec,
  CodecRegistry,
  DEFAULT_MAX_PAYLOAD_BYTES,
  decodeAs,
  decodeWhole,
  encodeChecked,
  encodeMessage
} from "./codec.js"
export { defaultKernelConfig, KernelConfig, type KernelConfigShape, kernelConfigLayer } from "./config.js"
export { CounterAddRpc, CounterFailRpc, CounterGetRpc, type CounterState, counterActor } from "./counter-actor.js"
export * from "./errors.js"
export { ERROR_HEADER, MALFORMED_HEADERS_HEADER, TRACEPARENT_HEADER, TYPE_HEADER } from "./headers.js"
export { type Kernel, memoryKernelLayer, natsKernelLayer } from "./kernel-layer.js"
export { isJoined, Membership, type MembershipShape, membershipLayer } from "./membership.js"
export { emptyView, type MembershipConfig, type MembershipView, memberKey, stepMembership } from "./membership-view.js"
export { type AskOptions, decodeReply, Messenger, type MessengerShape, messengerLayer } from "./messenger.js"
export {
  authorizationConfig,
  type GrantSpec,
  grantFor,
  type NatsGrant
} from "./nats-grants.js"
export {
  inboxPrefixOf,
  NATS_NKEY_ENV,
  NATS_TLS_CA_ENV,
  NATS_TLS_CERT_ENV,
  NATS_TLS_KEY_ENV,
  type NatsSecurity,
  NatsSecurityError,
  type NatsTls,
  natsConnectOptions,
  natsSecurityEnv,
  natsSecurityFromEnv,
  newNkeyUser,
  nkeyPublicKey,
  readNkeySeed
} from "./nats-security.js"
export {
  findNatsServerBinary,
  freePort,
  type NatsServer,
  NatsServerError,
  type NatsServerOptions,
  natsTlsConfig,
  startNatsServer
} from "./nats-server.js"
export {
  type LocalActor,
  makePresenceDetails,
  PresenceDetails,
  type PresenceDetailsShape,
  presenceDetailsLayer,
  type RoleStatus,
  STATUS_READ_TIMEOUT_MS
} from "./presence-details.js"
export { lmdbStorageLayer, memoryStorageLayer, Storage, StorageError, type StorageShape } from "./storage.js"
export * from "./subjects.js"
export { TurnBatcher, type TurnBatcherOptions } from "./turn-batcher.js"
