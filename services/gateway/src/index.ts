/**
 * @reef/gateway: the gRPC front door of a Reef cluster (`reef.v1.Cluster`), one service served with
 * @reef/grpc, and a small client for the CLI.
 */
export {
  type CallOptions,
  clusterClient,
  GatewayCallError,
  listActors,
  ping
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
export {
  DEFAULT_GATEWAY_PORT,
  GATEWAY_PROTO_FILES,
  GATEWAY_ROLE,
  type GatewayOptions,
  gatewayActor,
  gatewayLayer,
  runGateway
} from "./gateway.js"
export { watchMembership } from "./watch.js"
