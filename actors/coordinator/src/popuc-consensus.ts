/**
 * The `popuc` consensus source: a running POPUC replica group (actors/replica) decides every block, so Reef's
 * two systems run together. Through the group's public KV client, the coordinator writes block `n`'s digest
 * into slot `n` of a chain that belongs to this coordinator incarnation, with a compare-and-set that requires
 * the slot to be empty; the replicas apply it in their consensus order and a block commits once its slot and
 * every slot before it are decided. Many blocks are in flight at once (one session, pipelined).
 *
 * A call whose outcome is unknown (a replica restarted, a session broke) is simply retried: the retry finds the
 * slot already holding this block's value (committed) or still empty (it writes it now). A slot holding another
 * value (another writer of this chain) rejects the block.
 */
import { randomUUID } from "node:crypto"
import { isJoined, Membership } from "@reef/kernel"
import type { Member } from "@reef/proto"
import { type KvClient, makeKvClient } from "@reef/replica"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { type BlockRef, ConsensusSource, type ConsensusSourceShape, type Decision } from "./consensus-source.js"

export interface PopucConsensusOptions {
  /** `host:port` of every replica's reef.v1.KV service. */
  readonly replicas: ReadonlyArray<string>
  /** The chain's key prefix: unique per coordinator incarnation, e.g. `remora/<cluster>/<id>/<incarnation>`. */
  readonly chain: string
  readonly timeoutMs?: number
}

const encoder = new TextEncoder()
const equalBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i])

/** A chain of slots that belongs to one coordinator incarnation (no other writer ever shares it). */
export const popucChain = (cluster: string, coordinator: string): string =>
  `remora/${cluster}/${coordinator}/${randomUUID()}`

/** The `kv` endpoints of the joined replicas of `group` (their heartbeats announce both). */
export const replicaAddresses = (members: ReadonlyArray<Member>, group: string): Array<string> =>
  members
    .filter(
      (m) =>
        isJoined(m) &&
        m.address?.role === "replica" &&
        (m.lastHeartbeat?.roleStatus.group ?? group) === group &&
        m.lastHeartbeat?.endpoints.kv !== undefined
    )
    .sort((a, b) => (a.address?.id ?? "").localeCompare(b.address?.id ?? "", "en", { numeric: true }))
    .map((m) => m.lastHeartbeat!.endpoints.kv!)

/** Waits until at least `min` replicas of `group` have joined the cluster; their KV addresses. */
export const findPopucReplicas = (group: string, min: number) =>
  Effect.gen(function* () {
    const membership = yield* Membership
    yield* Effect.logInfo(`waiting for ${min} joined replica(s) of POPUC group ${group}`)
    const members = yield* membership.awaitMembers((ms) => replicaAddresses(ms, group).length >= min)
    return replicaAddresses(members, group)
  })

export const slotValue = (block: BlockRef): Uint8Array => encoder.encode(`${block.proposal}:${block.digest}`)

/** Orders slot outcomes: decisions are released in slot order, whatever order the replies come in. */
export class SlotSequencer {
  private nextSlot = 1
  private nextRelease = 1
  private readonly settled = new Map<number, Decision>()

  claim(): number {
    return this.nextSlot++
  }

  settle(slot: number, decision: Decision): ReadonlyArray<Decision> {
    if (slot < this.nextRelease || this.settled.has(slot)) return []
    this.settled.set(slot, decision)
    const out: Array<Decision> = []
    for (let d = this.settled.get(this.nextRelease); d !== undefined; d = this.settled.get(this.nextRelease)) {
      this.settled.delete(this.nextRelease++)
      out.push(d)
    }
    return out
  }
}

export const makePopucConsensus = (
  options: PopucConsensusOptions
): Effect.Effect<ConsensusSourceShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const kv: KvClient = yield* makeKvClient({
      replicas: options.replicas,
      mode: "balanced",
      timeoutMs: options.timeoutMs ?? 10_000
    })
    // Decisions in flight are interrupted when the scope closes (their retries would otherwise go on).
    const runFork = yield* FiberSet.makeRuntime<never>()
    const slots = new SlotSequencer()
    let listener: ((d: Decision) => void) | undefined
    const settle = (slot: number, d: Decision) => {
      for (const decided of slots.settle(slot, d)) listener?.(decided)
    }
    const decide = (slot: number, block: BlockRef) => {
      const value = slotValue(block)
      const key = `${options.chain}/slot/${slot}`
      return kv.compareAndSet(key, null, value).pipe(
        // Unknown outcome: try again, the compare-and-set makes the retry safe.
        Effect.retry(Schedule.exponential("20 millis").pipe(Schedule.union(Schedule.spaced("1 second")))),
        Effect.map((reply): Decision => {
          if (reply.swapped || (reply.currentFound && equalBytes(reply.current, value))) {
            return { _tag: "Commit", proposal: block.proposal }
          }
          return {
            _tag: "Reject",
            proposal: block.proposal,
            reason: `slot ${slot} of ${options.chain} holds another block`
          }
        }),
        Effect.tap((d) => Effect.sync(() => settle(slot, d)))
      )
    }
    return {
      name: "popuc",
      description: `popuc group ${options.replicas.join(",")} chain ${options.chain}`,
      listen: (onDecision) => {
        listener = onDecision
      },
      propose: (block) => {
        runFork(decide(slots.claim(), block))
      }
    }
  })

export const popucConsensusLayer = (options: PopucConsensusOptions): Layer.Layer<ConsensusSource> =>
  Layer.scoped(ConsensusSource, makePopucConsensus(options))
