/**
 * `reef run coordinator`: the coordinator actor on the kernel, its ConsensusSource, and reef.v1.Execution over
 * gRPC. The workers are the `worker` actors the membership view sees (joined or suspected; a worker that left
 * gets no new work).
 */
import { randomUUID } from "node:crypto"
import { serveGrpc } from "@reef/grpc"
import { type Codec, KernelConfig, Membership, Messenger, PresenceDetails, spawn } from "@reef/kernel"
import { MessagingTracing } from "@reef/observability/tracing"
import { descriptorSetPath } from "@reef/proto"
import { type CoordinatorParams, defaultCoordinatorParams } from "@reef/remora"
import { COORDINATOR_ROLE, SpanRecorder, WORKER_ROLE } from "@reef/remora/shell"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import { ConsensusSource } from "./consensus-source.js"
import { coordinatorActor } from "./coordinator-actor.js"
import { CoordinatorDriver, type CoordinatorOptions, defaultCoordinatorOptions } from "./coordinator-driver.js"
import { lmdbDurableState, memoryDurableState } from "./durable-state.js"
import { makeExecutionService } from "./execution-service.js"
import { WorkerSet } from "./worker-set.js"

export interface RunCoordinatorOptions extends Partial<Omit<CoordinatorOptions, "id" | "incarnation" | "params">> {
  readonly id: string
  readonly params?: Partial<CoordinatorParams>
  /** gRPC port of reef.v1.Execution; 0 picks a free one. */
  readonly grpcPort?: number
  readonly grpcHost?: string
  /** Where the coordinator keeps its chain, receipts and snapshots (LMDB); none: in memory (a restart starts over). */
  readonly dataDir?: string
}

export interface CoordinatorHandle {
  readonly driver: CoordinatorDriver
  readonly grpcAddress: string
  readonly incarnation: string
}

/** "2 active, 1 spare": the pool by state (`reef tx state` lists each worker). */
export const poolSummary = (pool: ReadonlyArray<{ readonly state: string }>): string => {
  const counts = new Map<string, number>()
  for (const m of pool) counts.set(m.state, (counts.get(m.state) ?? 0) + 1)
  return (
    ["active", "retiring", "spare"]
      .filter((state) => counts.has(state))
      .map((state) => `${counts.get(state)} ${state}`)
      .join(", ") || "none"
  )
}

/** The coordinator's counters, as its heartbeats carry them. */
export const coordinatorStatus = (driver: CoordinatorDriver): Record<string, string> => ({
  consensus: driver.consensus.name,
  accepted: String(driver.counters.accepted),
  committed: String(driver.counters.committed),
  completed: String(driver.counters.completed),
  blocks: String(driver.counters.blocks),
  workers: String(driver.workers.length),
  recoveries: String(driver.counters.recoveries),
  "persist index": String(driver.core.persisted.seq),
  ...(driver.pool.elastic
    ? {
        pool: poolSummary(driver.poolView()),
        "scale out/in": `${driver.counters.scaleOuts}/${driver.counters.scaleIns}`
      }
    : {}),
  // Each worker's part in the pool, by incarnation (reef status shows it in the worker's row).
  ...Object.fromEntries(
    driver
      .poolView()
      .map((m) => [`pool ${m.worker}@${m.incarnation}`, m.state === "spare" ? "spare" : `${m.state} ${m.loadUs}µs`])
  )
})

export const EXECUTION_PROTO_FILES: ReadonlyArray<string> = ["reef/v1/execution.proto"]

export const runCoordinator = (options: RunCoordinatorOptions) =>
  Effect.gen(function* () {
    const config = yield* KernelConfig
    const messenger = yield* Messenger
    const membership = yield* Membership
    const consensus = yield* ConsensusSource
    const tracing = yield* MessagingTracing
    const tracer = yield* Effect.tracer
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const incarnation = randomUUID()
    const { id, params, grpcPort, grpcHost, dataDir, ...rest } = options
    const resolved: CoordinatorOptions = {
      ...defaultCoordinatorOptions(id, incarnation, { ...defaultCoordinatorParams, ...params }),
      ...rest
    }
    const tellWorker = <A>(
      worker: string,
      codec: Codec<A>,
      messages: ReadonlyArray<A>,
      parent: Tracer.Span | undefined
    ) => {
      const send = messenger
        .tellMany({ cluster: config.cluster, role: WORKER_ROLE, id: worker }, codec, messages)
        .pipe(
          Effect.catchAll((e) =>
            Effect.logWarning(`could not send ${messages.length} ${codec.$type} to ${worker}: ${e.message}`)
          )
        )
      runFork(parent === undefined ? send : Effect.withParentSpan(send, parent))
    }
    const durable = yield* Effect.acquireRelease(
      dataDir === undefined
        ? Effect.succeed(memoryDurableState())
        : Effect.promise(() =>
            lmdbDurableState(dataDir, {
              warn: (message) => runFork(Effect.logWarning(message).pipe(Effect.annotateLogs({ coordinator: id })))
            })
          ),
      (d) => Effect.promise(() => d.close())
    )
    const driver = new CoordinatorDriver(
      resolved,
      {
        tellWorker,
        spans: new SpanRecorder(tracer, tracing),
        warn: (message) => runFork(Effect.logWarning(message).pipe(Effect.annotateLogs({ coordinator: id }))),
        info: (message) => runFork(Effect.logInfo(message).pipe(Effect.annotateLogs({ coordinator: id })))
      },
      consensus,
      durable
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => driver.close()))
    yield* spawn(coordinatorActor(driver), id, { incarnation })

    // Workers: every `worker` actor that joined and has not left, as its newest incarnation.
    const workers = new WorkerSet()
    yield* membership.watch.pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          if (event.member?.address?.role !== WORKER_ROLE) return
          const active = workers.update(event)
          if (active !== undefined) driver.setWorkers(active)
        })
      ),
      Effect.forkScoped
    )

    const service = yield* makeExecutionService(driver)
    const server = yield* serveGrpc({
      ...(grpcHost === undefined ? {} : { host: grpcHost }),
      port: grpcPort ?? 0,
      services: [service],
      reflection: { descriptorSet: descriptorSetPath, protoFiles: EXECUTION_PROTO_FILES }
    })
    // Presence: where clients reach it, and its counters for `reef status`.
    const presence = yield* Effect.serviceOption(PresenceDetails)
    if (Option.isSome(presence)) {
      const self = { role: COORDINATOR_ROLE, id }
      yield* presence.value.announce({ grpc: server.address }, self)
      yield* presence.value.reportStatus(
        self,
        Effect.sync(() => {
          driver.telemetry.sample({
            counters: driver.counters,
            mempool: driver.mempool.size,
            core: driver.core,
            pool: driver.poolView()
          })
          return coordinatorStatus(driver)
        })
      )
    }
    const scaling = resolved.autoscale
    yield* Effect.logInfo(
      `coordinator ${id}: consensus ${consensus.description}, policy ${resolved.params.policy}` +
        (scaling === undefined
          ? ""
          : `, autoscale ${scaling.min}..${scaling.max} (load ${scaling.lowLoad}..${scaling.highLoad} µs per worker)`)
    )
    const handle: CoordinatorHandle = { driver, grpcAddress: server.address, incarnation }
    return handle
  })
