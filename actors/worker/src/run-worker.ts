/**
 * `reef run worker`: one Remora worker actor on the kernel, talking to its coordinator and peers over NATS.
 */

import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { type Codec, incarnationAfter, KernelConfig, Messenger, PresenceDetails, spawn } from "@reef/kernel"
import { MessagingTracing } from "@reef/observability/tracing"
import { COORDINATOR_ROLE, SpanRecorder, WORKER_ROLE } from "@reef/remora/shell"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { workerActor } from "./worker-actor.js"
import { defaultWorkerOptions, WorkerDriver, type WorkerOptions } from "./worker-driver.js"
import { WorkerTelemetry } from "./worker-telemetry.js"

export interface RunWorkerOptions extends Partial<Omit<WorkerOptions, "id" | "incarnation">> {
  readonly id: string
  /** The coordinator's actor id (its reports and object requests go there). */
  readonly coordinator?: string
  /**
   * The coordinator retired this worker (scale-in): nothing needs it any more. `reef run worker` stops the
   * process; by default it stays, idle (a retired incarnation never gets work again).
   */
  readonly onRetired?: () => void
}

export interface WorkerHandle {
  readonly id: string
  readonly options: WorkerOptions
  /** The driver of the running actor (its core and load), for tests and benchmarks in the same process. */
  readonly driver: () => WorkerDriver | undefined
}

export const runWorker = (options: RunWorkerOptions) =>
  Effect.gen(function* () {
    const config = yield* KernelConfig
    const messenger = yield* Messenger
    const tracing = yield* MessagingTracing
    const tracer = yield* Effect.tracer
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const { coordinator = "c1", id, onRetired, ...rest } = options
    // REEF_REMORA_AUDIT_DIR: the audit log of every version produced (a debugging aid, see WorkerOptions).
    const auditDir = process.env.REEF_REMORA_AUDIT_DIR
    const resolved: WorkerOptions = {
      ...defaultWorkerOptions(id, randomUUID()),
      ...(auditDir === undefined || auditDir === "" ? {} : { auditFile: join(auditDir, `${id}.audit`) }),
      ...rest
    }
    const spans = new SpanRecorder(tracer, tracing)
    const warn = (message: string) => runFork(Effect.logWarning(message).pipe(Effect.annotateLogs({ worker: id })))
    const coordinatorAddress = { cluster: config.cluster, role: COORDINATOR_ROLE, id: coordinator }
    const send = <A>(to: { cluster: string; role: string; id: string }, codec: Codec<A>, messages: ReadonlyArray<A>) =>
      runFork(
        messenger
          .tellMany(to, codec, messages)
          .pipe(
            Effect.catchAll((e) => Effect.logWarning(`could not send ${messages.length} ${codec.$type}: ${e.message}`))
          )
      )
    let current: WorkerDriver | undefined
    let rebuilds = 0
    const makeDriver = Effect.sync(() => {
      // A restart after a defect starts a fresh driver; the old one's timers must not feed anything any more.
      // Its objects are gone: it runs as a new incarnation (the one the kernel announces), so the coordinator
      // recovers at once instead of waiting for a stall.
      current?.close()
      const incarnation = incarnationAfter(resolved.incarnation, rebuilds++)
      current = new WorkerDriver(
        { ...resolved, incarnation },
        {
          tellWorker: (worker, codec, messages) =>
            send({ cluster: config.cluster, role: WORKER_ROLE, id: worker }, codec, messages),
          tellCoordinator: (codec, messages) => send(coordinatorAddress, codec, messages),
          spans,
          warn
        }
      )
      return current
    })
    let retired = false
    const retire = (reason: string) => {
      if (retired) return
      retired = true
      runFork(
        Effect.logInfo(`retired by coordinator ${coordinator} (${reason}): it no longer needs this worker`).pipe(
          Effect.annotateLogs({ worker: id })
        )
      )
      onRetired?.()
    }
    yield* spawn(workerActor(makeDriver, warn, retire), id, { incarnation: resolved.incarnation })
    yield* Effect.addFinalizer(() => Effect.sync(() => current?.close()))
    // Presence: what it has executed and holds, for `reef status`.
    const presence = yield* Effect.serviceOption(PresenceDetails)
    if (Option.isSome(presence)) {
      const telemetry = new WorkerTelemetry(id)
      yield* presence.value.reportStatus(
        { role: WORKER_ROLE, id },
        Effect.sync(() => {
          const status = current?.status() ?? {}
          telemetry.sample(status)
          // Which coordinator's pool it is in (reef status reads its part there).
          return { ...status, coordinator }
        })
      )
    }
    const handle: WorkerHandle = { id, options: resolved, driver: () => current }
    return handle
  })
