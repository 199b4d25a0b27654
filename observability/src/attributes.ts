/**
 * Span and resource attribute names Reef sets, in one place so the kernel, gRPC hosting, the roles, the
 * dashboards and the tests agree. Standard names follow the OpenTelemetry semantic conventions (`rpc.*`);
 * Reef's own live under `reef.*`. A name is never both an attribute and a namespace (semconv), so the actor a
 * message is handled by is `reef.actor.address`, beside the resource's `reef.actor.id`.
 */

/** Resource: the process's actor id (also `service.instance.id`). */
export const ATTR_REEF_ACTOR_ID = "reef.actor.id"
/** Resource: the process's role (`reef-<role>` is the default service name). */
export const ATTR_REEF_ROLE = "reef.role"
/** Span: the actor that handles a message, as `role/id`. */
export const ATTR_REEF_ACTOR_ADDRESS = "reef.actor.address"
/** Span: the protobuf type of the message sent or handled (`reef.v1.CounterAdd`). */
export const ATTR_REEF_MESSAGE_TYPE = "reef.message.type"
/** Span: true on a send that expects a reply. */
export const ATTR_REEF_ASK = "reef.ask"
/** Span: the target of a Ping (`role/id`). */
export const ATTR_REEF_PING_TARGET = "reef.ping.target"
/** Span: how many relays a Ping goes through. */
export const ATTR_REEF_PING_RELAY_HOPS = "reef.ping.relay_hops"

/** Span: `grpc` on every gRPC client and server span. */
export const ATTR_RPC_SYSTEM = "rpc.system"
/** Span: the full service name (`reef.v1.Cluster`). */
export const ATTR_RPC_SERVICE = "rpc.service"
/** Span: the method name (`Ping`). */
export const ATTR_RPC_METHOD = "rpc.method"
/** Span: the numeric gRPC status a call ended with. */
export const ATTR_RPC_GRPC_STATUS_CODE = "rpc.grpc.status_code"
export const RPC_SYSTEM_GRPC = "grpc"
