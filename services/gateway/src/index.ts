/**
 * @reef/gateway: the gRPC front door of a Reef cluster (`reef.v1.Cluster`), the reusable scoped grpc-js
 * server it runs on (health + reflection + Effect handlers), the one ErrorCode → gRPC status mapping, and a
 * small client for the CLI.
 */
export {
  type CallOptions,
  clusterClient,
  GatewayCallError,
  listActors,
  ping,
  watchMembership
} from "./client.js"
export {
  type ClusterServiceOptions,
  MAX_PING_PAYLOAD_BYTES,
  MAX_PING_RELAY_HOPS,
  makeClusterService,
  selectMembers,
  type ValidPing,
  validatePing,
  validateRole,
  watchedEvent
} from "./cluster-service.js"
export { InvalidRequestError } from "./errors.js"
export {
  DEFAULT_GATEWAY_PORT,
  GATEWAY_PROTO_FILES,
  GATEWAY_ROLE,
  type GatewayOptions,
  gatewayActor,
  gatewayLayer,
  runGateway
} from "./gateway.js"
export {
  DEFAULT_GRPC_HOST,
  DEFAULT_SHUTDOWN_GRACE_MS,
  GrpcServerError,
  type GrpcServerInfo,
  hostPort,
  type ReflectionOptions,
  type ServeGrpcOptions,
  serveGrpc
} from "./grpc-server.js"
export {
  type CallInfo,
  type CallRunner,
  type EffectHandler,
  type EffectHandlers,
  type FramedSession,
  framedSession,
  type GrpcService,
  grpcService,
  implement,
  MAX_SESSION_FRAME_BYTES,
  MAX_SESSION_IN_FLIGHT,
  methodName,
  rawGrpcService,
  type ServerStreamHandler,
  type SessionFrames,
  type SessionHandler,
  type SessionHandlers,
  type SessionShortcut,
  serverStreamHandler,
  serviceNameOf,
  sessionHandler,
  type UnaryHandler,
  unaryHandler,
  withServerSpan
} from "./handlers.js"
export {
  type GrpcStatus,
  grpcCodeOf,
  INTERNAL_DETAILS,
  REEF_ERROR_CODE_TRAILER,
  reefCodeOf,
  SHUTTING_DOWN_DETAILS,
  statusOfCause,
  statusOfFailure,
  type TaggedFailure
} from "./status.js"
