/** @reef/airdb/segment: the Segment service and its layers (JetStream, Redis, Azure Append Blob, memory). */
export { type AzureSegmentOptions, azureSegmentLayer, azureSegmentStore, azuriteConnectionString } from "./azure.js"
export { type JetStreamSegmentOptions, jetStreamSegmentLayer, jetStreamSegmentStore } from "./jetstream.js"
export { MEMORY_LIMITS, MemorySegments, makeMemorySegmentStore, memorySegmentLayer } from "./memory.js"
export { DEFAULT_CALL_TIMEOUT_MS } from "./raw-store.js"
export { type RedisSegmentOptions, redisSegmentLayer, redisSegmentStore } from "./redis.js"
export * from "./segment.js"
