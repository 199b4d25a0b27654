/** What the coordinator's and workers' Effect shells share: wire conversions, a per-turn outbox, spans. */
export { TurnOutbox } from "./outbox.js"
export { linkTo, nowNs, type SpanOptions, SpanRecorder, traceparentOf } from "./spans.js"
export * from "./wire.js"
