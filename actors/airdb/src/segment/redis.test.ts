import { startRedisServer } from "@reef/devkit"
import * as Effect from "effect/Effect"
import { signalProcess } from "../testing/signal.js"
import { segmentConformance } from "./conformance.js"
import { redisSegmentStore } from "./redis.js"

segmentConformance(
  "redis",
  Effect.gen(function* () {
    const redis = yield* startRedisServer()
    return {
      store: (options = {}) =>
        redisSegmentStore({
          port: redis.port,
          ...(options.tiny ? { maxRecords: 3 } : {}),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
        }),
      pause: signalProcess(redis.pid, "SIGSTOP"),
      resume: signalProcess(redis.pid, "SIGCONT")
    }
  })
)
