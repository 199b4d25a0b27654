import * as Effect from "effect/Effect"
import { segmentConformance } from "./conformance.js"
import { MEMORY_LIMITS, MemorySegments, makeMemorySegmentStore } from "./memory.js"

segmentConformance(
  "memory",
  Effect.sync(() => {
    const shared = new MemorySegments()
    const tiny = new MemorySegments({ ...MEMORY_LIMITS, maxRecords: 3, maxPosition: 3 })
    return {
      store: (options = {}) => Effect.sync(() => makeMemorySegmentStore(options.tiny ? tiny : shared))
    }
  })
)
