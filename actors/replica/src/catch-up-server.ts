/**
 * The catch-up server: how a replica helps a peer (re)join. A peer asks with the first instance it has not
 * applied (CatchUpRequest); it gets the decisions from there on when they are in the decision log and fit
 * one reply, otherwise the state itself, frozen as of now and fetched chunk by chunk (SnapshotChunkRequest).
 * Either way the reply names the instance to join at and the memberships from then on.
 *
 * The answer waits for the next decision: the joiner then enters an instance as it starts (within a round
 * of its peers) instead of one already half over. Not when the group has decided nothing yet (it is forming:
 * the asker sync-starts), nor when this replica's own engine is out of the group (waiting would stall a group
 * whose members all self-quit at once: they must all rejoin from what they have), nor while closing.
 */
import { randomInt } from "node:crypto"
import { HandlerError, rpc } from "@reef/kernel"
import { type PeerStatus, valueToWire } from "@reef/nic"
import {
  CatchUpReply,
  CatchUpRequest,
  ErrorCode,
  type PopucEpoch,
  SnapshotChunkReply,
  SnapshotChunkRequest
} from "@reef/proto"
import * as Effect from "effect/Effect"
import type { ReplicaState } from "./replica-state.js"
import { deliveredToWire, type FrozenSnapshot, freezeSnapshot } from "./snapshot.js"

/** Replica-to-replica: what a (re)joining replica asks a peer for. */
export const CatchUpRpc = rpc(CatchUpRequest, CatchUpReply)
/** Replica-to-replica: one chunk of the snapshot a CatchUpReply announced. */
export const SnapshotChunkRpc = rpc(SnapshotChunkRequest, SnapshotChunkReply)

/** Missed decisions are sent in one reply up to this size; beyond it (or beyond the log) a snapshot is. */
export const MAX_CATCH_UP_DECISION_BYTES = 512 * 1024
/** How long a frozen snapshot is served: long enough for a joiner to fetch every chunk. */
export const FROZEN_SNAPSHOT_TTL_MS = 60_000
/**
 * How long an answer waits for the next decision: a running group decides many times within it, and the
 * asker's try (rejoin-driver.ts ASK_TRY_MS) must outlast it.
 */
const NEXT_DECISION_WAIT = "1 second"

export interface CatchUpServerOptions {
  readonly state: ReplicaState
  /** Where this replica's own engine is (rejoin core `peerStatus`); undefined before it starts. */
  readonly engineStatus: () => PeerStatus | undefined
  /** The memberships this replica's engine knows (its schedule), from the instance it runs on. */
  readonly schedule: Effect.Effect<ReadonlyArray<PopucEpoch>>
  readonly nowMs: () => number
}

export class CatchUpServer {
  /** The snapshot a peer was last sent, served chunk by chunk. */
  private frozen: { readonly snapshot: FrozenSnapshot; atMs: number } | undefined
  /** Answers waiting for the next decision. */
  private nextDecisionWaiters: Array<() => void> = []
  private closing = false
  /**
   * Snapshot ids start at a random point: a joiner still fetching chunks of a snapshot a previous server
   * (before a restart) announced must never get another snapshot's chunks under the same id.
   */
  private nextSnapshotId = randomInt(1, 2 ** 47)

  constructor(private readonly options: CatchUpServerOptions) {}

  /** A decision was applied: answers waiting for it go out (after it, so they include it). */
  onDecision(): void {
    if (this.nextDecisionWaiters.length === 0) return
    const waiters = this.nextDecisionWaiters
    this.nextDecisionWaiters = []
    queueMicrotask(() => {
      for (const w of waiters) w()
    })
  }

  /** No more decisions will come: answers waiting for one go out now. */
  close(): void {
    this.closing = true
    const waiters = this.nextDecisionWaiters
    this.nextDecisionWaiters = []
    for (const w of waiters) w()
  }

  /** Lets go of a frozen snapshot nobody fetched for a while (it may hold a whole state's worth of references). */
  evictIdle(): void {
    if (this.frozen !== undefined && this.options.nowMs() - this.frozen.atMs > FROZEN_SNAPSHOT_TTL_MS) {
      this.frozen = undefined
    }
  }

  /** This replica's own engine does not take part in the group now (rejoining, or not started). */
  private engineOut(): boolean {
    return this.options.engineStatus()?.rejoining ?? true
  }

  catchUp(request: CatchUpRequest): Effect.Effect<CatchUpReply, HandlerError> {
    const { state } = this.options
    if (request.group !== state.group) {
      return Effect.fail(
        new HandlerError({ code: ErrorCode.ERROR_CODE_INVALID_ARGUMENT, message: `not in group ${request.group}` })
      )
    }
    const server = this
    return Effect.gen(function* () {
      if (state.decisions.lastInstance > 0 && !server.engineOut() && !server.closing) {
        yield* Effect.async<void>((resume) => {
          server.nextDecisionWaiters.push(() => resume(Effect.void))
        }).pipe(Effect.timeout(NEXT_DECISION_WAIT), Effect.ignore)
      }
      const schedule = yield* server.options.schedule
      const joinInstance = state.decisions.lastInstance + 1
      const status = server.options.engineStatus()
      const common = {
        rejoining: status?.rejoining ?? true,
        joinInstance,
        // The engine's attempt counts at the instance the asker is told to join at.
        attempt: status?.joinInstance === joinInstance ? status.attempt : -1,
        schedule: [...schedule]
      }
      const since = state.decisions.since(request.fromInstance, MAX_CATCH_UP_DECISION_BYTES)
      // More than one message's worth but still in the log: the first part now, the rest when asked again.
      const part = since ?? state.decisions.prefix(request.fromInstance, MAX_CATCH_UP_DECISION_BYTES)
      if (part !== undefined) {
        return CatchUpReply.fromPartial({
          ...common,
          more: since === undefined,
          decisions: part.map((d) => ({ instance: d.instance, values: d.values.map(valueToWire) }))
        })
      }
      // Too far behind for the log (or for one message): the state itself, frozen as of now.
      const snapshot = yield* server.freeze()
      yield* Effect.logInfo(
        `sending a snapshot at instance ${snapshot.instance} (${snapshot.chunks.length} chunks) to a peer at ${request.fromInstance}`
      )
      return CatchUpReply.fromPartial({
        ...common,
        hasSnapshot: true,
        snapshotId: snapshot.id,
        snapshotInstance: snapshot.instance,
        snapshotHash: snapshot.stateHash,
        snapshotCommands: snapshot.appliedCommands,
        snapshotDelivered: deliveredToWire(snapshot.delivered),
        snapshotChunks: snapshot.chunks.length
      })
    })
  }

  chunk(request: SnapshotChunkRequest): Effect.Effect<SnapshotChunkReply, HandlerError> {
    return Effect.suspend(() => {
      const frozen = this.frozen
      const chunk = frozen?.snapshot.id === request.snapshotId ? frozen.snapshot.chunks[request.chunk] : undefined
      if (chunk === undefined) {
        return Effect.fail(
          new HandlerError({
            code: ErrorCode.ERROR_CODE_NOT_FOUND,
            message: `no chunk ${request.chunk} of snapshot ${request.snapshotId} (expired or never sent)`
          })
        )
      }
      frozen!.atMs = this.options.nowMs()
      return Effect.succeed(SnapshotChunkReply.fromPartial({ entries: [...chunk] }))
    })
  }

  /**
   * The state as of the last applied instance; reused while current, so many joiners share one copy. With a
   * replicated app, its contents are captured at this point of the log (what is applied later is not in them).
   */
  private freeze(): Effect.Effect<FrozenSnapshot> {
    const { state } = this.options
    const now = this.options.nowMs()
    if (this.frozen !== undefined && this.frozen.snapshot.instance === state.appliedInstance + 1) {
      this.frozen.atMs = now
      return Effect.succeed(this.frozen.snapshot)
    }
    const id = this.nextSnapshotId++
    const instance = state.appliedInstance + 1
    const { delivered, app } = state
    const keep = (snapshot: FrozenSnapshot) => {
      this.frozen = { snapshot, atMs: this.options.nowMs() }
      return snapshot
    }
    if (app === undefined) return Effect.succeed(keep(freezeSnapshot(id, state.kv, instance, delivered)))
    const { stateHash, appliedCommands } = state.kv
    // Asked now, in this turn: the capture is taken right after the writes applied so far.
    const captured = app.capture()
    return Effect.promise(() => captured).pipe(
      Effect.map((entries) => {
        const records = new Map(entries.map((e) => [e.key, { value: e.value, version: e.version }]))
        return keep(freezeSnapshot(id, { records, stateHash, appliedCommands }, instance, delivered))
      })
    )
  }
}
