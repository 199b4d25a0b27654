/**
 * The light part of @reef/observability (subpath `@reef/observability/tracing`): W3C trace context and the
 * messaging span conventions, with no OpenTelemetry SDK behind them. The kernel imports only this.
 */
export * from "./messaging.js"
export * from "./propagation.js"
export * from "./traceparent.js"
