/**
 * The replica: the host server next to a NIC engine (the paper's scarHW-server). It proposes client commands
 * through its engine, applies decided commands in the merged order, answers the client once its command is
 * applied, and serves reef.v1.KV over gRPC. This module wires the parts together:
 *
 * - replica-state.ts   what the process holds (identity and incarnation, KV state, log, delivered index)
 * - applier.ts         applying decided batches, telling this incarnation's own results from others'
 * - proposer.ts        proposing commands and read barriers, answering callers once applied
 * - kv-service.ts      reef.v1.KV: argument checks, unary handlers, sessions, State, Reconfigure
 * - catch-up-server.ts helping peers (re)join: decisions or a snapshot
 * - rejoin-driver.ts   joining the group at start and after self-quits (the pure core is @reef/nic's rejoin)
 *
 * Linearizability: writes are answered after they are applied, in the total order; reads are ordered through
 * consensus behind a read barrier (read-barrier.ts), so a read sees every write acknowledged before it
 * started. tests/src/popuc-*.test.ts check recorded histories with a linearizability checker.
 */
import { createHash } from "node:crypto"
import { GrpcServerError, serveGrpc } from "@reef/grpc"
import {
  type BusError,
  defineActor,
  type InvalidAddressError,
  type Kernel,
  KernelConfig,
  Messenger,
  onAsk,
  PresenceDetails,
  spawn
} from "@reef/kernel"
import {
  type AppliedBatch,
  type EngineError,
  type EngineOptions,
  isRunning,
  type NicEngine,
  peerStatus,
  type RoundClose,
  type RoundValues,
  roundPeriodMs,
  startEngine
} from "@reef/nic"
import { MessagingTracing } from "@reef/observability/tracing"
import type { StateResponse } from "@reef/proto"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import { applyBatch } from "./applier.js"
import { CatchUpRpc, CatchUpServer, SnapshotChunkRpc } from "./catch-up-server.js"
import type { DecisionLogLimits } from "./decision-log.js"
import { recordInstanceSpan } from "./instance-spans.js"
import { DEFAULT_MAX_KEY_BYTES, DEFAULT_MAX_VALUE_BYTES, makeKvService } from "./kv-service.js"
import type { HashChain } from "./kv-state.js"
import { Proposer, unavailable } from "./proposer.js"
import { appBackend, startRedisApp } from "./redis-app.js"
import { kvBackend } from "./redis-kv.js"
import { makeRejoinDriver, type RejoinDriver } from "./rejoin-driver.js"
import { createReplicaState } from "./replica-state.js"
import { ReplicaTelemetry } from "./replica-telemetry.js"
import { startRespServer } from "./resp-server.js"

export interface ReplicaOptions {
  readonly id: string
  readonly group: string
  readonly members: ReadonlyArray<string>
  readonly natsUrl: string
  /** gRPC port of reef.v1.KV; 0 picks a free one. */
  readonly grpcPort: number
  readonly grpcHost?: string
  /** Redis (RESP) port over the same state (resp-server.ts); 0 picks a free one; none without it. */
  readonly respPort?: number
  /**
   * `redis`: replicate a local redis-server instead of the KV records (redis-app.ts), started on a free port,
   * or the one at `redisPort`. Its RESP port is `respPort` (a free one when unset).
   */
  readonly app?: { readonly kind: "redis"; readonly redisPort?: number }
  readonly engines?: number
  readonly interactionMs?: number
  readonly minInteractionMs?: number
  /** Gap between consensus instances (ms); EngineOptions.instanceGapMs. */
  readonly instanceGapMs?: number
  /** When a consensus round closes (EngineOptions.roundClose). */
  readonly roundClose?: RoundClose
  /** How later consensus rounds carry their values (EngineOptions.roundValues). */
  readonly roundValues?: RoundValues
  readonly maxKeyBytes?: number
  readonly maxValueBytes?: number
  /** Bounds of the decision log peers catch up from (beyond them, a peer gets a snapshot). */
  readonly log?: DecisionLogLimits
}

export interface ReplicaHandle {
  readonly grpcAddress: string
  /** `host:port` of the Redis endpoint, when it has one. */
  readonly respAddress: string | undefined
  /** With `--app redis`: `host:port` of the local redis-server it replicates. */
  readonly redisAddress: string | undefined
  readonly engine: NicEngine
  readonly state: Effect.Effect<StateResponse>
}

/** The role name replicas register under (their catch-up server's address). */
export const REPLICA_ROLE = "replica"

const sha256Chain: HashChain = (previous, bytes) => createHash("sha256").update(previous).update(bytes).digest("hex")

/**
 * Runs a replica in the current scope. Returns once it serves: it started the group, or joined it and applied
 * up to the instance it joined at ("ready means ready"); until then its KV answers UNAVAILABLE.
 */
export const runReplica = (
  options: ReplicaOptions
): Effect.Effect<ReplicaHandle, GrpcServerError | EngineError | BusError | InvalidAddressError, Kernel | Scope.Scope> =>
  Effect.gen(function* () {
    const config = yield* KernelConfig
    const messenger = yield* Messenger
    const runtime = yield* Effect.runtime<never>()
    const runSync = Runtime.runSync(runtime)
    const fork = yield* FiberSet.makeRuntime<never, void, never>()
    /** Whether spans are exported: without, a span per instance or per request is pure cost (a fiber each). */
    const tracing = yield* MessagingTracing
    const log = (level: "info" | "warn", message: string) =>
      fork(
        (level === "info" ? Effect.logInfo(message) : Effect.logWarning(message)).pipe(
          Effect.annotateLogs({ replica: options.id })
        )
      )

    const state = createReplicaState(options)
    /** Metrics and the role status `reef status` shows (replica-telemetry.ts). */
    const telemetry = new ReplicaTelemetry(options.group, options.id)
    /** Set once the engine is up; the gRPC server binds first so a port clash fails before the group forms. */
    let engine: NicEngine | undefined
    /** Set once the engine is up; engine events before that cannot happen (it reports only after Ready). */
    let driver: RejoinDriver | undefined
    const proposer = new Proposer<Tracer.Span>(
      () => engine,
      () =>
        unavailable(`replica ${options.id} is joining group ${options.group}: not serving yet, try again or elsewhere`),
      (message) => log("warn", message),
      (operation, ms) => telemetry.onRequestDone(operation, ms)
    )
    const catchUp = new CatchUpServer({
      state,
      engineStatus: () => (driver === undefined ? undefined : peerStatus(driver.state())),
      schedule: Effect.suspend(() =>
        engine === undefined
          ? Effect.succeed([{ fromInstance: 1, members: [...state.members] }])
          : engine.stats.pipe(
              Effect.map((stats) => stats[0]?.schedule.epochs ?? [{ fromInstance: 1, members: state.members }]),
              Effect.orElseSucceed(() => [{ fromInstance: 1, members: state.members }]),
              Effect.map((epochs) => epochs.map((e) => ({ fromInstance: e.fromInstance, members: [...e.members] })))
            )
      ),
      nowMs: () => Date.now()
    })

    // ---- applying decided batches (synchronous, in merged order) -------------------------------------------
    const ownResults = {
      command: proposer.onApplied.bind(proposer),
      membership: proposer.onMembershipApplied.bind(proposer)
    }
    const onApplied = (batch: AppliedBatch) => {
      telemetry.onApplied(batch)
      const span =
        tracing && batch.values.length > 0 ? runSync(recordInstanceSpan(options.group, options.id, batch)) : undefined
      const applied = applyBatch(state, batch, sha256Chain, ownResults, span)
      for (const reason of applied.skipped) log("warn", `skipping ${reason}`)
      catchUp.onDecision()
      if (applied.membersChanged) driver?.step({ _tag: "Members", members: state.members })
      driver?.step({ _tag: "Applied", instance: batch.instance })
    }

    // ---- the KV service ---------------------------------------------------------------------------------------
    const kv = makeKvService({
      state,
      proposer,
      engine: () => engine,
      limits: {
        maxKeyBytes: options.maxKeyBytes ?? DEFAULT_MAX_KEY_BYTES,
        maxValueBytes: options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES
      },
      tracing,
      logDefect: (message, cause) =>
        fork(Effect.logError(message, cause).pipe(Effect.annotateLogs({ replica: options.id })))
    })
    const { descriptorSetPath } = yield* Effect.promise(() => import("@reef/proto"))
    const server = yield* serveGrpc({
      port: options.grpcPort,
      ...(options.grpcHost === undefined ? {} : { host: options.grpcHost }),
      services: [kv.service],
      reflection: { descriptorSet: descriptorSetPath, protoFiles: ["reef/v1/kv.proto"] }
    })

    // ---- --app redis: the local redis-server every decided Redis write is applied to ---------------------------
    const redisApp =
      options.app === undefined
        ? undefined
        : yield* Effect.acquireRelease(
            Effect.tryPromise({
              try: () =>
                startRedisApp(options.app?.redisPort === undefined ? {} : { port: options.app.redisPort }, Date.now),
              catch: (cause) => new GrpcServerError({ operation: "bind", target: "the local redis-server", cause })
            }),
            (running) => Effect.promise(() => running.close())
          )
    if (redisApp !== undefined) state.app = redisApp.app

    // ---- the Redis endpoint: the same proposer and read barrier as the gRPC KV --------------------------------
    const respPort = options.respPort ?? (redisApp === undefined ? undefined : 0)
    const resp =
      respPort === undefined
        ? undefined
        : yield* Effect.acquireRelease(
            Effect.tryPromise({
              try: () =>
                startRespServer({
                  host: options.grpcHost ?? "127.0.0.1",
                  port: respPort,
                  backend:
                    redisApp === undefined
                      ? kvBackend({
                          state,
                          proposer,
                          engines: options.engines ?? 1,
                          limits: {
                            maxKeyBytes: options.maxKeyBytes ?? DEFAULT_MAX_KEY_BYTES,
                            maxValueBytes: options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES
                          }
                        })
                      : appBackend({ running: redisApp, proposer, engines: options.engines ?? 1, nowMs: Date.now }),
                  replicaId: options.id,
                  group: options.group,
                  log: (message) => log("warn", message)
                }),
              catch: (cause) => new GrpcServerError({ operation: "bind", target: `RESP port ${respPort}`, cause })
            }),
            (server) => Effect.promise(() => server.close())
          )

    // ---- the engine -------------------------------------------------------------------------------------------
    const closing = { now: false }
    const running = yield* startEngine(
      {
        natsUrl: options.natsUrl,
        cluster: config.cluster,
        group: options.group,
        self: options.id,
        incarnation: state.incarnation,
        members: options.members,
        ...(options.engines === undefined ? {} : { engines: options.engines }),
        ...(options.interactionMs === undefined ? {} : { interactionMs: options.interactionMs }),
        ...(options.minInteractionMs === undefined ? {} : { minInteractionMs: options.minInteractionMs }),
        ...(options.instanceGapMs === undefined ? {} : { instanceGapMs: options.instanceGapMs }),
        ...(options.roundClose === undefined ? {} : { roundClose: options.roundClose }),
        ...(options.roundValues === undefined ? {} : { roundValues: options.roundValues })
      } satisfies EngineOptions,
      {
        onApplied,
        onCrashed: (engineIndex, crash) => {
          // Shutting down: peers leave and the engine thread stops; there is nothing to rejoin.
          if (closing.now) return
          log("warn", `engine ${engineIndex} self-quit at instance ${crash.instance}: ${crash.reason}; rejoining`)
          telemetry.onSelfQuit()
          driver?.step({
            _tag: "EngineCrashed",
            nowMs: performance.now(),
            instance: crash.instance,
            attempt: crash.attempt,
            entered: crash.entered
          })
        },
        onAttempt: (_engineIndex, instance, attempt) => driver?.step({ _tag: "EngineStarted", instance, attempt }),
        onRejoined: (_engineIndex, instance) => {
          telemetry.onRejoined("learner")
          driver?.step({ _tag: "EngineRejoined", nowMs: performance.now(), instance })
        },
        onDropped: (engineIndex, reason) =>
          log("warn", `engine ${engineIndex} dropped a malformed round message: ${reason}`),
        onLog: (level, message) => log(level, message)
      }
    )
    engine = running

    // ---- helping peers: the catch-up server, as this replica's actor ------------------------------------------
    yield* spawn(
      defineActor({
        role: REPLICA_ROLE,
        description: "POPUC replica: host server of a replicated KV group (gRPC reef.v1.KV)",
        initialState: Effect.succeed(catchUp),
        handlers: [
          onAsk(CatchUpRpc, (request) => catchUp.catchUp(request)),
          onAsk(SnapshotChunkRpc, (request) => catchUp.chunk(request))
        ]
      }),
      options.id
    )
    // Presence: where clients reach this replica, and its consensus health for `reef status`.
    const presence = yield* PresenceDetails
    const self = { role: REPLICA_ROLE, id: options.id }
    yield* presence.announce(
      {
        kv: server.address,
        ...(resp === undefined ? {} : { resp: resp.address }),
        ...(redisApp === undefined ? {} : { redis: redisApp.address })
      },
      self
    )
    yield* presence.reportStatus(
      self,
      Effect.map(kv.stateResponse, (response) =>
        telemetry.status(response, driver === undefined || !isRunning(driver.state()), Date.now())
      )
    )
    yield* Effect.sync(() => catchUp.evictIdle()).pipe(Effect.repeat(Schedule.spaced("10 seconds")), Effect.forkScoped)

    // ---- joining: start the group, or join it, and serve once caught up ---------------------------------------
    const serving = yield* Deferred.make<void>()
    const rejoin = makeRejoinDriver({
      state,
      engine: running,
      messenger,
      config,
      roundPeriodMs: roundPeriodMs(running.roundTimer),
      fork,
      onServe: () => {
        proposer.serve()
        Deferred.unsafeDone(serving, Effect.void)
      },
      onRestored: (error) => proposer.failWaiting(error),
      // A join after this replica served is a rejoin (at start-up it is how a restarted replica joins).
      onJoined: () => {
        if (proposer.isServing) telemetry.onRejoined("transfer")
      },
      log,
      nowMs: () => performance.now()
    })
    driver = rejoin
    // Closing: no more decisions will come, so catch-up answers waiting for one are released now (the actor's
    // drain would otherwise wait out their timeout), and a rejoin in progress stops asking peers that leave.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closing.now = true
        rejoin.step({ _tag: "Close" })
        catchUp.close()
      })
    )
    rejoin.start()
    yield* Deferred.await(serving)
    yield* Effect.logInfo(`serving: applied up to instance ${state.appliedInstance} of group ${options.group}`)
    return {
      grpcAddress: server.address,
      respAddress: resp?.address,
      redisAddress: redisApp?.address,
      engine: running,
      state: kv.stateResponse
    }
  })
