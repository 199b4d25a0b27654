/**
 * @reef/observability: OpenTelemetry tracing and metrics export for Reef actors.
 *
 * Actors trace with plain Effect APIs (`Effect.withSpan`, `Tracer.externalSpan`); this package provides the
 * Layers that make those spans real OTel spans (`ObservabilityLive`, `ObservabilityTest`), W3C `traceparent`
 * helpers for NATS headers, the messaging span conventions, and an OTLP/HTTP receiver for end-to-end tests.
 */

export {
  ATTR_REEF_ACTOR_ADDRESS,
  ATTR_REEF_ACTOR_ID,
  ATTR_REEF_ASK,
  ATTR_REEF_MESSAGE_TYPE,
  ATTR_REEF_PING_RELAY_HOPS,
  ATTR_REEF_PING_TARGET,
  ATTR_REEF_ROLE,
  ATTR_RPC_GRPC_STATUS_CODE,
  ATTR_RPC_METHOD,
  ATTR_RPC_SERVICE,
  ATTR_RPC_SYSTEM,
  RPC_SYSTEM_GRPC
} from "./attributes.js"
export {
  type ActorIdentity,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  DEFAULT_METRIC_EXPORT_INTERVAL_MS,
  DEFAULT_OTLP_METRICS_URL,
  DEFAULT_OTLP_TRACES_URL,
  type Env,
  type MetricsExportConfig,
  type ObservabilityConfig,
  parseResourceAttributes,
  type ResourceConfig,
  resolveObservabilityConfig,
  type TraceExporterConfig
} from "./config.js"
export { ObservabilityLive, type ObservabilityOptions } from "./live.js"
export {
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_BODY_SIZE,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  MESSAGING_SYSTEM_NATS,
  type MessagingOperation,
  type MessagingSpanOptions,
  MessagingTracing,
  messagingSpan,
  withMessagingSpan
} from "./messaging.js"
export {
  type MetricsServer,
  MetricsServerError,
  type MetricsServerOptions,
  metricsPage,
  PROMETHEUS_CONTENT_TYPE,
  prometheusText,
  serveMetrics
} from "./metrics.js"
export {
  type AttributeValue,
  decodeExportRequest,
  decodeMetricsExportRequest,
  type OtlpReceiver,
  OtlpReceiverError,
  type OtlpReceiverOptions,
  type ReceivedMetricPoint,
  type ReceivedSpan,
  type ReceivedSpanKind,
  startOtlpReceiver
} from "./otlpReceiver.js"
export {
  currentTraceContext,
  currentTraceparent,
  externalSpanFromTraceContext,
  parentSpanFromTraceparent,
  traceContextOf
} from "./propagation.js"
export { makeObservabilityTest, ObservabilityTest, type ReadableSpan, TEST_ACTOR, TestSpans } from "./testing.js"
export {
  formatTraceparent,
  isValidSpanId,
  isValidTraceId,
  parseTraceparent,
  TRACEPARENT_HEADER,
  type TraceContext
} from "./traceparent.js"
