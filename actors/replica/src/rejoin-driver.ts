/**
 * The shell around the rejoin core (`@reef/nic` core/rejoin.ts): it carries out what the core decides (ask
 * the peers, install a snapshot, join the engine, start the group, serve) and feeds back what came of it,
 * plus what the replica observes (decisions applied, self-quits, learner rejoins, membership changes).
 * Each output is one fiber in the driver's scope; the core itself never waits.
 */
import { HandlerError, type KernelConfigShape, type MessengerShape, type Rpc } from "@reef/kernel"
import {
  createRejoin,
  type DeliveredIndex,
  type JoinSnapshot,
  mayInstallSnapshot,
  membersAt,
  type NicEngine,
  type PeerAnswer,
  type RejoinInput,
  type RejoinOutput,
  type RejoinState,
  stepRejoin,
  valueFromWire
} from "@reef/nic"
import { type CatchUpReply, ErrorCode } from "@reef/proto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import { catchUpReplyProblem, snapshotChunkProblem } from "./catch-up-check.js"
import { CatchUpRpc, SnapshotChunkRpc } from "./catch-up-server.js"
import type { ReplicaState } from "./replica-state.js"
import { deliveredFromWire, installSnapshot } from "./snapshot.js"

/**
 * How long a peer has to answer one try of a catch-up or snapshot-chunk ask, and how many tries it gets. A
 * request published while the connection is down (a nats-server restart: every engine self-quits and asks
 * its peers at once) can be lost without a "no responders"; one long timeout then held up the whole rejoin
 * for its full length, several short tries cost one try. A try outlasts the catch-up server's wait for the
 * next decision (catch-up-server.ts). Both asks are idempotent.
 */
const ASK_TRY_MS = 2_500
const ASK_TRIES = 4
/** Parts of one catch-up answer (each at most MAX_CATCH_UP_DECISION_BYTES) fetched before giving up on it. */
const MAX_CATCH_UP_PARTS = 64

/** A snapshot could not be fetched or installed (a chunk expired, a peer left). */
/** A peer's catch-up answer could not be fetched whole (its decisions outran the parts fetched). */
export class CatchUpPartsError extends Data.TaggedError("CatchUpPartsError")<{
  readonly peer: string
  readonly parts: number
}> {
  override get message() {
    return `${this.peer}'s decisions outran the ${this.parts} parts fetched of its catch-up answer`
  }
}

/** A peer's catch-up answer that cannot be acted on (catch-up-check.ts): counted as no answer. */
export class InvalidCatchUpError extends Data.TaggedError("InvalidCatchUpError")<{
  readonly peer: string
  readonly reason: string
}> {
  override get message() {
    return `${this.peer}'s catch-up answer is invalid: ${this.reason}`
  }
}

export class RestoreError extends Data.TaggedError("RestoreError")<{ readonly peer: string; readonly reason: string }> {
  override get message() {
    return `could not restore ${this.peer}'s snapshot: ${this.reason}`
  }
}

export interface RejoinDriverOptions {
  readonly state: ReplicaState
  readonly engine: NicEngine
  readonly messenger: MessengerShape
  readonly config: KernelConfigShape
  /** A round period of the group's engines. */
  readonly roundPeriodMs: number
  /** Forks an effect in the replica's scope (interrupted when it closes). */
  readonly fork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** The replica serves from now on. */
  readonly onServe: () => void
  /** The engine joined the group with a peer's decisions (a state transfer). */
  readonly onJoined?: () => void
  /** The replica's state jumped to a snapshot: calls waiting for their outcome cannot know it. */
  readonly onRestored: (error: HandlerError) => void
  readonly log: (level: "info" | "warn", message: string) => void
  readonly nowMs: () => number
}

export interface RejoinDriver {
  readonly step: (input: RejoinInput) => void
  readonly state: () => RejoinState
  /** Starts asking the peers (once the engine is up and the catch-up server answers). */
  readonly start: () => void
}

export const makeRejoinDriver = (options: RejoinDriverOptions): RejoinDriver => {
  const { state, engine, messenger } = options
  let core = createRejoin({ self: state.id, members: state.members, roundPeriodMs: options.roundPeriodMs })
  /** The replies of the last ask, by peer: what a Join or Restore output refers to. */
  let replies = new Map<string, CatchUpReply>()
  /** The delivered index of the snapshot installed last (a join from it hands it to the engine). */
  let restoredDelivered: DeliveredIndex | undefined

  const address = (peer: string) => ({ cluster: options.config.cluster, role: "replica", id: peer })
  /** Asks `peer`, again after a try that timed out (see ASK_TRY_MS). */
  const askPeer = <A, B>(peer: string, protocol: Rpc<A, B>, message: A) =>
    messenger
      .ask(address(peer), protocol, message, { timeoutMs: ASK_TRY_MS })
      .pipe(Effect.retry({ times: ASK_TRIES - 1, while: (error) => error._tag === "AskTimeoutError" }))

  const step = (input: RejoinInput) => {
    const result = stepRejoin(core, input)
    core = result.state
    for (const output of result.out) perform(output)
  }

  const answerOf = (peer: string, reply: CatchUpReply): PeerAnswer => ({
    peer,
    joinInstance: reply.joinInstance,
    rejoining: reply.rejoining,
    attempt: reply.attempt,
    snapshot: reply.hasSnapshot,
    member:
      reply.schedule.length === 0 ||
      membersAt({ epochs: reply.schedule.map((e) => ({ ...e })) }, reply.joinInstance).includes(state.id)
  })

  /**
   * `peer`'s answer with every decision from `fromInstance` on: a reply that had more than one message's
   * worth (`more`) is followed by asks for the rest, while the peer's log still holds it; a peer that falls
   * back to a snapshot meanwhile answers with that. (Before, such a joiner got a snapshot each time, and under
   * load installed one snapshot after another while the group wrote more than one message's worth.)
   */
  const askCatchUp = (peer: string, fromInstance: number) =>
    askPeer(peer, CatchUpRpc, { group: state.group, fromInstance }).pipe(
      Effect.flatMap((reply) => {
        const problem = catchUpReplyProblem(reply)
        if (problem === undefined) return Effect.succeed(reply)
        options.log("warn", `refused the catch-up answer of ${peer}: ${problem}`)
        return Effect.fail(new InvalidCatchUpError({ peer, reason: problem }))
      })
    )

  const askAll = (peer: string, fromInstance: number) =>
    Effect.gen(function* () {
      let reply = yield* askCatchUp(peer, fromInstance)
      let decisions = reply.decisions
      for (let part = 1; reply.more && !reply.hasSnapshot && part < MAX_CATCH_UP_PARTS; part++) {
        const next = Number(decisions.at(-1)?.instance ?? fromInstance - 1) + 1
        reply = yield* askCatchUp(peer, next)
        if (reply.hasSnapshot) return reply
        decisions = [...decisions, ...reply.decisions]
      }
      // Still short: counted as no answer (the log window ends the race with a snapshot before long).
      if (reply.more) return yield* new CatchUpPartsError({ peer, parts: MAX_CATCH_UP_PARTS })
      return { ...reply, decisions }
    })

  const ask = (id: number, fromInstance: number) =>
    Effect.gen(function* () {
      const peers = state.members.filter((m) => m !== state.id)
      const answered = yield* Effect.forEach(
        peers,
        (peer) =>
          askAll(peer, fromInstance).pipe(
            Effect.map((reply) => [peer, reply] as const),
            Effect.option
          ),
        { concurrency: "unbounded" }
      )
      const got = answered.flatMap((a) => (a._tag === "Some" ? [a.value] : []))
      replies = new Map(got)
      step({ _tag: "Answers", ask: id, nowMs: options.nowMs(), answers: got.map(([peer, r]) => answerOf(peer, r)) })
    })

  /** Replaces this replica's state with `peer`'s frozen snapshot (announced in its last reply). */
  const restore = (peer: string, reply: CatchUpReply) =>
    Effect.gen(function* () {
      const total = reply.snapshotChunks
      options.log("info", `fetching the snapshot of ${peer} at instance ${reply.snapshotInstance}: ${total} chunks`)
      let fetched = 0
      const chunks = yield* Effect.forEach(
        Array.from({ length: total }, (_, chunk) => chunk),
        (chunk) =>
          askPeer(peer, SnapshotChunkRpc, { group: state.group, snapshotId: reply.snapshotId, chunk }).pipe(
            Effect.mapError((e) => new RestoreError({ peer, reason: `chunk ${chunk}: ${e.message}` })),
            Effect.flatMap((r) => {
              const problem = snapshotChunkProblem(r)
              return problem === undefined
                ? Effect.succeed(r.entries)
                : Effect.fail(new RestoreError({ peer, reason: `chunk ${chunk}: ${problem}` }))
            }),
            // A line at each quarter of a long transfer (a replica's output is lines, read by reef up or a log).
            Effect.tap(() => {
              fetched++
              const quarter = (n: number) => Math.floor((4 * n) / total)
              if (total >= 8 && fetched < total && quarter(fetched) > quarter(fetched - 1)) {
                const percent = Math.floor((100 * fetched) / total)
                options.log("info", `snapshot of ${peer}: ${fetched} of ${total} chunks (${percent}%)`)
              }
            })
          )
      )
      // The answer is as old as the ask: meanwhile this replica may have applied as far (its engine learning on
      // its own). Installing then would move its state backwards under decisions already applied.
      if (!mayInstallSnapshot(core, reply.snapshotInstance)) {
        return yield* new RestoreError({
          peer,
          reason: `its snapshot at instance ${reply.snapshotInstance} is no longer awaited or not ahead of this replica (applied ${state.appliedInstance})`
        })
      }
      installSnapshot(state.kv, { stateHash: reply.snapshotHash, appliedCommands: reply.snapshotCommands, chunks })
      if (state.app !== undefined) {
        // The entries are the app's contents: they go into it, before any write applied from now on.
        state.app.restore(chunks.flat())
        state.kv.records.clear()
      }
      state.appliedInstance = reply.snapshotInstance - 1
      state.decisions.reset(reply.snapshotInstance)
      state.delivered = deliveredFromWire(reply.snapshotDelivered)
      restoredDelivered = state.delivered
      state.snapshotsRestored++
      const epoch = reply.schedule.filter((e) => e.fromInstance <= reply.snapshotInstance).at(-1)
      if (epoch !== undefined) state.members = [...epoch.members]
      // Client calls still waiting may have been decided in the instances the snapshot skips: their outcome
      // is unknown, like a timeout's; the values still pending in the engine are proposed again.
      options.onRestored(
        new HandlerError({
          code: ErrorCode.ERROR_CODE_UNAVAILABLE,
          message: "this replica restored its state from a snapshot: outcome unknown"
        })
      )
      options.log(
        "info",
        `restored the state of ${peer} at instance ${reply.snapshotInstance} (${state.kv.records.size} keys, ${chunks.length} chunks)`
      )
      step({ _tag: "Restored", nowMs: options.nowMs(), instance: reply.snapshotInstance })
    }).pipe(
      Effect.catchAll((error) =>
        Effect.sync(() => step({ _tag: "RestoreFailed", nowMs: options.nowMs(), reason: error.message }))
      )
    )

  const join = (output: Extract<RejoinOutput, { _tag: "Join" }>, reply: CatchUpReply) => {
    const snapshot: JoinSnapshot | undefined =
      output.snapshotAt === undefined || restoredDelivered === undefined
        ? undefined
        : { instance: output.snapshotAt, delivered: restoredDelivered }
    return engine
      .join({
        startNow: output.startNow,
        startInstance: output.joinInstance,
        attempt: output.attempt,
        decisions: reply.decisions.map((d) => ({
          instance: d.instance,
          values: d.values.flatMap((v) => {
            const value = valueFromWire(v)
            return value === undefined ? [] : [value]
          })
        })),
        schedule: { epochs: reply.schedule.map((e) => ({ fromInstance: e.fromInstance, members: e.members })) },
        ...(snapshot === undefined ? {} : { snapshot })
      })
      .pipe(
        Effect.tap(() => Effect.sync(() => options.onJoined?.())),
        Effect.catchAll((error) =>
          Effect.sync(() => step({ _tag: "JoinFailed", nowMs: options.nowMs(), reason: error.reason }))
        )
      )
  }

  const perform = (output: RejoinOutput): void => {
    switch (output._tag) {
      case "Ask":
        options.fork(ask(output.ask, output.fromInstance))
        return
      case "SetTimer":
        options.fork(
          Effect.sleep(output.afterMs).pipe(
            Effect.zipRight(Effect.sync(() => step({ _tag: "Timer", nowMs: options.nowMs(), id: output.id })))
          )
        )
        return
      case "SyncStart":
        options.fork(engine.syncStart)
        return
      case "Restore": {
        // The core chose from the answers of its last ask, all of which are in `replies`.
        const reply = replies.get(output.peer)!
        options.fork(restore(output.peer, reply))
        return
      }
      case "Join": {
        const reply = replies.get(output.peer)!
        options.fork(join(output, reply))
        return
      }
      case "Serve":
        options.onServe()
        return
      case "Log":
        options.log(output.level, output.message)
        return
    }
  }

  return {
    step,
    state: () => core,
    start: () => step({ _tag: "Start", nowMs: options.nowMs() })
  }
}
