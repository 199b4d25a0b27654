/**
 * `@reef/observability/metrics`: the `/metrics` endpoint of an actor process and the Prometheus text form of
 * Effect's metric registry. A subpath of its own: an actor process loads it without the tracing SDK.
 */
export {
  type MetricsServer,
  MetricsServerError,
  type MetricsServerOptions,
  metricsPage,
  sampleProcessMetrics,
  serveMetrics
} from "./metrics-server.js"
export {
  formatValue,
  type Labels,
  PROMETHEUS_CONTENT_TYPE,
  prometheusText,
  sanitizeLabelName,
  sanitizeMetricName
} from "./prometheus.js"
