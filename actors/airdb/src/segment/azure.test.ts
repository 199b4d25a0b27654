import * as Effect from "effect/Effect"
import { startAzurite } from "../testing/azurite.js"
import { signalProcess } from "../testing/signal.js"
import { azureSegmentStore, azuriteConnectionString } from "./azure.js"
import { segmentConformance } from "./conformance.js"

segmentConformance(
  "azure (Azurite)",
  Effect.gen(function* () {
    const azurite = yield* startAzurite()
    const connectionString = azuriteConnectionString(azurite.port)
    return {
      store: (options = {}) =>
        azureSegmentStore({
          connectionString,
          ...(options.tiny ? { maxBlobBytes: 48 } : {}),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
        }),
      pause: signalProcess(azurite.pid, "SIGSTOP"),
      resume: signalProcess(azurite.pid, "SIGCONT")
    }
  })
)
