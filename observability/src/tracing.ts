/**
 * The light part of @reef/observability (subpath `@reef/observability/tracing`): W3C trace context, the
 * messaging span conventions and Reef's attribute names, with no OpenTelemetry SDK behind them. The kernel
 * imports only this.
 */
export * from "./attributes.js"
export * from "./messaging.js"
export * from "./propagation.js"
export * from "./traceparent.js"
