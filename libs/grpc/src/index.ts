/**
 * @reef/grpc: gRPC hosting for any Reef process. A scoped grpc-js server with health and reflection
 * (`serveGrpc`), Effect handlers for unary and server-streaming methods (`grpcService`), bidirectional and
 * framed sessions (`sessionHandler`, `framedSession`), the one Reef failure → gRPC status mapping with its
 * `reef-error-code` trailer, the edge's own tagged error (`InvalidRequestError`) and the status codes by name
 * (`GrpcCode`). The gateway is one service built on it; a replica serves `reef.v1.KV` with it.
 */
export { type CallInfo, type CallRunner, methodName } from "./call.js"
export { InvalidRequestError } from "./errors.js"
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
  type EffectHandler,
  type EffectHandlers,
  type GrpcService,
  grpcService,
  implement,
  rawGrpcService,
  type ServerStreamHandler,
  serverStreamHandler,
  serviceNameOf,
  type UnaryHandler,
  unaryHandler,
  withServerSpan
} from "./handlers.js"
export {
  bearerTokenInterceptor,
  GRPC_TLS_CA_ENV,
  GRPC_TLS_CERT_ENV,
  GRPC_TLS_CLIENT_AUTH_ENV,
  GRPC_TLS_KEY_ENV,
  GRPC_TOKEN_ENV,
  type GrpcSecurity,
  grpcClientCredentials,
  grpcSecurityEnv,
  grpcSecurityFromEnv,
  grpcServerCredentials,
  securityInterceptors
} from "./security.js"
export {
  type FramedSession,
  framedSession,
  MAX_SESSION_FRAME_BYTES,
  MAX_SESSION_IN_FLIGHT,
  type SessionFrames,
  type SessionHandler,
  type SessionHandlers,
  type SessionShortcut,
  sessionHandler
} from "./session.js"
export {
  GrpcCode,
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
