import { startNatsServer } from "@reef/kernel"
import * as Effect from "effect/Effect"
import { signalProcess } from "../testing/signal.js"
import { segmentConformance } from "./conformance.js"
import { jetStreamSegmentStore } from "./jetstream.js"

segmentConformance(
  "jetstream",
  Effect.gen(function* () {
    const nats = yield* startNatsServer({ jetstream: true })
    const pid = (yield* nats.pid) ?? 0
    return {
      store: (options = {}) =>
        jetStreamSegmentStore({
          servers: nats.url,
          storage: "memory",
          ...(options.tiny ? { maxRecords: 3 } : {}),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
        }),
      pause: signalProcess(pid, "SIGSTOP"),
      resume: signalProcess(pid, "SIGCONT")
    }
  })
)
