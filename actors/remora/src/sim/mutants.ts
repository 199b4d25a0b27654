/**
 * Deliberately broken coordinators and workers. The simulator must catch each one; if it ever stops doing so,
 * the checker has gone blind (a checker that cannot fail proves nothing).
 */
import { stepCoordinator } from "../core/coordinator.js"
import { COORDINATOR_OWNER, ownerOf, pack, versionOf } from "../core/object-table.js"
import { COORDINATOR_SOURCE, type Source } from "../core/types.js"
import { stepWorker } from "../core/worker.js"
import type { SimHooks } from "./world.js"

/** Adopts the plan made during the window even when the block commits out of proposal order. */
const adoptOutOfOrder: SimHooks = {
  stepCoordinator: (s, input) => {
    if (input._tag === "Commit") {
      const i = s.pending.findIndex((p) => p.block.proposal === input.proposal)
      if (i > 0) s.pending.unshift(...s.pending.splice(i, 1))
    }
    return stepCoordinator(s, input)
  }
}

/** Gives the second access of a key in each committed block the version the first one got (a reused counter). */
const reuseVersion: SimHooks = {
  stepCoordinator: (s, input) => {
    const out = stepCoordinator(s, input)
    if (input._tag !== "Commit") return out
    for (const o of out) {
      if (o._tag !== "SendStateful") continue
      for (const t of o.tasks) {
        // Roll the router's counter of the task's first key back by one: the next access reuses a version.
        const key = s.keys.find(t.tx.keys[0]!)
        const packed = s.router.get(key)
        if (versionOf(packed) > 0) s.router.set(key, pack(versionOf(packed) - 1, ownerOf(packed)))
        return out
      }
    }
    return out
  }
}

/** The router forgets to record the new owner at dispatch: later transactions fetch from the wrong worker. */
const staleOwner: SimHooks = {
  stepCoordinator: (s, input) => {
    if (input._tag !== "Commit") return stepCoordinator(s, input)
    const before = new Map<number, number>()
    const block = s.pending.find((p) => p.block.proposal === input.proposal)?.keyed
    for (const id of block?.ids ?? []) if (!before.has(id)) before.set(id, s.router.get(id))
    const out = stepCoordinator(s, input)
    for (const [k, packed] of before) s.router.set(k, pack(versionOf(s.router.get(k)), ownerOf(packed)))
    s.scheduler.resync()
    return out
  }
}

/** Runs the contract whatever the validation token says. */
const ignoreInvalidToken: SimHooks = {
  stepWorker: (s, input) => stepWorker(s, input._tag === "UnitDone" ? { ...input, valid: true } : input)
}

/** Forgets which dispatched transactions it has seen: a duplicated dispatch runs again. */
const noDispatchDedup: SimHooks = {
  stepWorker: (s, input) => {
    if (input._tag === "Stateful") {
      s.received.clear()
      s.watermark = 1
    }
    return stepWorker(s, input)
  }
}

/** Takes any transfer, even of a version it has already had (a duplicate arriving late). */
const acceptStaleTransfer: SimHooks = {
  stepWorker: (s, input) => {
    if (input._tag === "ObjectArrived" && input.value !== undefined) {
      // Forgets that it ever had the key, and takes the transfer as if it had asked for it.
      s.seen.delete(input.key)
      const vk = `${input.key}\u0000${input.version}`
      if (!s.fetching.has(vk)) s.fetching.set(vk, { to: input.from, sentAtMs: s.nowMs, hinted: input.from, trace: "" })
    }
    return stepWorker(s, input)
  }
}

// ---- recovery (§4.6) and restarts ------------------------------------------------------------------------

/**
 * Records as persist_index the dispatch index at the time the snapshot is written, not the end of the epoch the
 * snapshot holds: blocks dispatched after the epoch ended are taken as persisted, and a recovery (or a restarted
 * coordinator) replays from the wrong index, skipping them.
 */
const persistIndexAtDispatch: SimHooks = {
  stepCoordinator: (s, input) => {
    const epochs = s.stats.epochsPersisted
    const out = stepCoordinator(s, input).map((o) =>
      o._tag === "Persist"
        ? {
            ...o,
            persisted: { ...o.persisted, seq: s.inflight.next - 1, height: s.log[s.log.length - 1]?.height ?? s.height }
          }
        : o
    )
    if (s.stats.epochsPersisted > epochs && s.log.length > 0) {
      s.persisted = { ...s.persisted, seq: s.inflight.next - 1, height: s.log[s.log.length - 1]!.height }
      s.log = []
      if (s.lastClosed.seq < s.persisted.seq) s.lastClosed = { seq: s.persisted.seq, height: s.persisted.height }
    }
    return out
  }
}

/**
 * A recovery that does not take ownership back: the replay's inputs are fetched from the workers that owned
 * them before the failure (a fenced worker, or the restarted incarnation, which hold nothing), not from the
 * coordinator's persisted copies.
 */
const noOwnershipReclaim: SimHooks = {
  stepCoordinator: (s, input) => {
    const owners = new Map<string, Source>()
    if (input._tag === "Workers" || input._tag === "Recover") {
      for (let id = 0; id < s.keys.size; id++) {
        const owner = ownerOf(s.router.get(id))
        if (owner !== COORDINATOR_OWNER) owners.set(s.keys.name(id), s.registry.idOf(owner))
      }
    }
    const out = stepCoordinator(s, input)
    if (!out.some((o) => o._tag === "Recovered")) return out
    return out.map((o) =>
      o._tag !== "SendStateful"
        ? o
        : {
            ...o,
            tasks: o.tasks.map((t) => ({
              ...t,
              sources: t.sources.map((src, i) =>
                src === COORDINATOR_SOURCE ? (owners.get(t.tx.keys[i]!) ?? src) : src
              )
            }))
          }
    )
  }
}

/** The coordinator shell keeps its seen-id set in memory only: after a restart a resubmitted id is new. */
const volatileSeenIds: SimHooks = { volatileSeenIds: true }

/**
 * Reads the final state as soon as the coordinator is idle (the shell's `complete` before finding S3): a worker
 * whose Fence was lost or is still queued holds objects a recovery took back.
 */
const readStateWhenIdle: SimHooks = { readStateWhenIdle: true }

/**
 * The stall backstop before finding S2: progress is the watermark only and the timeout never grows, so a replay
 * backlog longer than the timeout is thrown away and started over forever.
 */
const stallWatermarkOnly: SimHooks = { stallWatermarkOnly: true }

/** Takes a lease transfer whatever generation it was sent in (the bug the crash simulator found first). */
const acceptOldGeneration: SimHooks = {
  stepWorker: (s, input) => stepWorker(s, input._tag === "ObjectArrived" ? { ...input, generation: undefined } : input)
}

// ---- elasticity (§4.7, Alg. 5) ---------------------------------------------------------------------------

/**
 * Retires a drained worker without the epoch-aligned reclaim: the router still names it as the owner of its
 * cold objects, whose versions nobody else holds once its process stopped.
 */
const retireWithoutReclaim: SimHooks = {
  stepCoordinator: (s, input) => {
    for (const r of s.retiring.values()) if (r.phase === "persisting") r.phase = "releasing"
    return stepCoordinator(s, input)
  }
}

/** Keeps a retired worker in the set that gets work (its process has stopped). */
const dispatchToRetired: SimHooks = {
  stepCoordinator: (s, input) => {
    const out = stepCoordinator(s, input)
    for (const o of out) {
      if (o._tag !== "Retired" || o.left) continue
      const code = s.registry.find(o.worker, o.incarnation)!
      s.decommissioned.delete(code)
      s.active = [...s.active, code].sort((a, b) => (s.registry.idOf(a) < s.registry.idOf(b) ? -1 : 1))
    }
    return out
  }
}

export const MUTANTS: ReadonlyMap<string, SimHooks> = new Map([
  ["adopt-out-of-order", adoptOutOfOrder],
  ["reuse-version", reuseVersion],
  ["stale-owner", staleOwner],
  ["ignore-invalid-token", ignoreInvalidToken],
  ["no-dispatch-dedup", noDispatchDedup],
  ["accept-stale-transfer", acceptStaleTransfer],
  ["persist-index-at-dispatch", persistIndexAtDispatch],
  ["no-ownership-reclaim", noOwnershipReclaim],
  ["volatile-seen-ids", volatileSeenIds],
  ["accept-old-generation", acceptOldGeneration],
  ["read-state-when-idle", readStateWhenIdle],
  ["stall-watermark-only", stallWatermarkOnly],
  ["retire-without-reclaim", retireWithoutReclaim],
  ["dispatch-to-retired", dispatchToRetired]
])
